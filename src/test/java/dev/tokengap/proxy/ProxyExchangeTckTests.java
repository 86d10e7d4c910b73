package dev.tokengap.proxy;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import dev.tokengap.TokengapApplication;
import dev.tokengap.testsupport.PrometheusText;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The proxy exchange as a publisher, held to the Reactive Streams TCK: a
 * {@code Mono<Void>} that completes once the exchange has its outcome, and never errors
 * (a failure is answered). Each exchange under test is a real one: a client's chat
 * completion request over loopback HTTP to a Reactor Netty server of the test's own, run
 * by the application's proxy handler against its built-in simulator; the TCK's subscriber
 * takes the place of the server's.
 */
public class ProxyExchangeTckTests extends PublisherVerification<Void> {

	private static final String BODY = "{\"model\":\"sim-llama-3-8b\",\"max_tokens\":3,"
			+ "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

	private final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();

	private ConfigurableApplicationContext application;

	private DisposableServer server;

	private HttpClient client;

	public ProxyExchangeTckTests() {
		super(new TestEnvironment(2000));
	}

	@BeforeClass
	public void start() {
		this.application = new SpringApplication(TokengapApplication.class).run("--server.port=0",
				"--management.server.port=0", "--tokengap.mode=demo", "--tokengap.demo.load=false",
				"--tokengap.sim.step-fixed-cost=1ms");
		// The server hands each request over and leaves its response to the exchange.
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((in, out) -> {
			this.requests.add(new Request(in, out));
			return Mono.never();
		}).bindNow();
		this.client = HttpClient.create().host("127.0.0.1").port(this.server.port());
	}

	@AfterClass(alwaysRun = true)
	public void stop() {
		if (this.server != null) {
			this.server.disposeNow(Duration.ofSeconds(5));
		}
		if (this.application != null) {
			this.application.close();
		}
	}

	@Override
	public Publisher<Void> createPublisher(long elements) {
		return exchange(next(ByteBufFlux.fromString(Mono.just(BODY)), BODY.length()));
	}

	// The rules the TCK leaves out for a publisher of no elements, on the same exchanges.

	@Test
	public void aCancelledExchangeSignalsNothingMoreAndNoLongerHoldsItsSubscriber() {
		Publisher<Void> exchange = createPublisher(0);
		double cancelled = clientsGone();
		Recording subscriber = new Recording((s) -> {
			s.cancel();
			// rules 3.6 and 3.7: no-ops after the cancel
			s.request(1);
			s.cancel();
			s.request(0);
		});
		List<String> signals = subscriber.signals;
		WeakReference<Recording> held = new WeakReference<>(subscriber);
		exchange.subscribe(subscriber);
		subscriber = null;
		await().atMost(Duration.ofSeconds(10)).until(() -> clientsGone() == cancelled + 1);
		assertThat(signals).as("nothing after the cancel (rule 3.12)").containsExactly("subscribed");
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			System.gc();
			return held.get() == null;
		});
		assertThat(exchange).as("the exchange itself is still held; its subscriber not (rule 3.13)").isNotNull();
	}

	@Test
	public void aRequestForNoElementsEndsTheExchangeWithAnIllegalArgumentException() {
		Recording subscriber = new Recording((s) -> s.request(0));
		createPublisher(0).subscribe(subscriber);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(subscriber.signals).containsExactly("subscribed",
					"error " + IllegalArgumentException.class.getName()));
	}

	@Test
	public void aSecondSubscriptionToTheBodyIsCancelled() throws Exception {
		// a body that never comes whole: the exchange stays reading it
		Request request = next(Flux.never(), 1000);
		ProxyExchange exchange = (ProxyExchange) exchange(request);
		Recording subscriber = new Recording((s) -> s.request(Long.MAX_VALUE));
		exchange.subscribe(subscriber);
		AtomicBoolean secondCancelled = new AtomicBoolean();
		Subscription second = new Subscription() {

			@Override
			public void request(long n) {
			}

			@Override
			public void cancel() {
				secondCancelled.set(true);
			}

		};
		// after the exchange's start on the same loop: its body's read is under way
		((Connection) request.out()).channel()
			.eventLoop()
			.submit(() -> exchange.onSubscribe(second))
			.get(10, TimeUnit.SECONDS);
		assertThat(secondCancelled).as("rule 2.5").isTrue();
		subscriber.subscription.cancel();
	}

	private Publisher<Void> exchange(Request request) {
		return this.application.getBean(ProxyHandler.class).handle(request.in(), request.out());
	}

	private double clientsGone() {
		int port = Integer.parseInt(this.application.getEnvironment().getProperty("local.management.port"));
		return PrometheusText.scrape(port).value("tokengap_requests_total", "status", "499");
	}

	/** Sends a request to the test's server and takes it there. */
	private Request next(Publisher<? extends ByteBuf> body, int length) {
		this.client.headers((headers) -> headers.set(HttpHeaderNames.CONTENT_LENGTH, length))
			.post()
			.uri("/v1/chat/completions")
			.send(body)
			.response()
			.subscribe(null, (ex) -> {
			});
		Request request;
		try {
			request = this.requests.poll(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		if (request == null) {
			throw new IllegalStateException("no request reached the test's server");
		}
		return request;
	}

	/** None: the exchange never errors, it answers a failure or ends the connection. */
	@Override
	public Publisher<Void> createFailedPublisher() {
		return null;
	}

	@Override
	public long maxElementsFromPublisher() {
		return 0;
	}

	private record Request(HttpServerRequest in, HttpServerResponse out) {
	}

	/** The server's place: records the signals, and acts on the subscription at once. */
	private static final class Recording implements CoreSubscriber<Void> {

		private final List<String> signals = new CopyOnWriteArrayList<>();

		private final Consumer<Subscription> onSubscribe;

		private volatile Subscription subscription;

		Recording(Consumer<Subscription> onSubscribe) {
			this.onSubscribe = onSubscribe;
		}

		@Override
		public void onSubscribe(Subscription s) {
			this.subscription = s;
			this.signals.add("subscribed");
			this.onSubscribe.accept(s);
		}

		@Override
		public void onNext(Void nothing) {
			this.signals.add("next");
		}

		@Override
		public void onError(Throwable error) {
			this.signals.add("error " + error.getClass().getName());
		}

		@Override
		public void onComplete() {
			this.signals.add("complete");
		}

	}

}
