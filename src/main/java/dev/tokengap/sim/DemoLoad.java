package dev.tokengap.sim;

import java.time.Duration;
import java.util.SplittableRandom;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * A gentle, endless chat load sent through the proxy's own port in demo mode, so that a
 * newcomer sees live histograms (and, now and then, a long prompt's prefill stalling the
 * other streams) without writing a client.
 */
public final class DemoLoad implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(DemoLoad.class);

	private final HttpClient client;

	private final String model;

	private final int concurrency;

	private final Disposable.Composite users = Disposables.composite();

	/**
	 * Creates the load; {@link #start()} begins it.
	 * @param client a client whose base URL is the proxy's port
	 * @param model the model to ask for
	 * @param concurrency streams kept in flight
	 */
	public DemoLoad(HttpClient client, String model, int concurrency) {
		this.client = client.headers((h) -> h.set("content-type", "application/json"));
		this.model = model;
		this.concurrency = concurrency;
	}

	/** Starts one looping virtual user per unit of concurrency. */
	public void start() {
		for (int user = 0; user < this.concurrency; user++) {
			SplittableRandom random = new SplittableRandom(1000L + user);
			this.users.add(Mono.defer(() -> oneRequest(random))
				.onErrorResume((ex) -> Mono.empty())
				.then(Mono.defer(() -> Mono.delay(Duration.ofMillis(200 + random.nextInt(1500)))))
				.repeat()
				.subscribe());
		}
		logger.info("Demo load: " + this.concurrency + " streams of chat completions through the proxy "
				+ "(tokengap.demo.load=false turns it off)");
	}

	private Mono<Void> oneRequest(SplittableRandom random) {
		int maxTokens = 32 + random.nextInt(224);
		// One request in ten carries a long prompt: its prefill shows up as a gap in the
		// others. Each prompt starts differently, or the simulator's prefix cache would
		// serve the long ones after the first.
		int promptChars = (random.nextInt(10) == 0) ? 6000 + random.nextInt(6000) : 40 + random.nextInt(400);
		String body = "{\"model\":\"" + this.model + "\",\"stream\":true,\"max_tokens\":" + maxTokens
				+ ",\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\""
				+ Long.toHexString(random.nextLong()) + "x".repeat(promptChars) + "\"}]}";
		return this.client.post()
			.uri("/v1/chat/completions")
			.send(ByteBufFlux.fromString(Mono.just(body)))
			.response((response, content) -> content.then())
			.then();
	}

	@Override
	public void close() {
		this.users.dispose();
	}

}
