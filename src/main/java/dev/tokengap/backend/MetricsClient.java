package dev.tokengap.backend;

import java.net.URI;
import java.time.Duration;

import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.util.unit.DataSize;

/**
 * GETs the engine's {@code /metrics} body as text, refusing anything but a 200 and never
 * holding more than the size cap.
 */
final class MetricsClient implements AutoCloseable {

	private final URI url;

	private final DataSize maxSize;

	private final ConnectionProvider connections;

	private final HttpClient client;

	MetricsClient(URI url, Duration connectTimeout, DataSize maxSize) {
		this.url = url;
		this.maxSize = maxSize;
		// Two connections: the periodic scrape and a concurrent readEdges. Idle ones
		// close before
		// uvicorn's 5 s keep-alive would, so a scrape never lands on a closing
		// connection.
		this.connections = ConnectionProvider.builder("tokengap-scrape")
			.maxConnections(2)
			.maxIdleTime(Duration.ofSeconds(4))
			.build();
		// No compression: the size cap must count the bytes actually held.
		this.client = HttpClient.create(this.connections)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, connectTimeout.toMillis()))
			.headers((headers) -> headers.set(HttpHeaderNames.ACCEPT, "text/plain"));
	}

	/**
	 * Reads the body into the buffer; fails with {@link ScrapeFailedException} on a
	 * status other than 200 or a body over the cap, and with the network's exception
	 * otherwise. Cancelling (e.g. by a timeout) closes the connection.
	 * @param into the buffer, whose cap must be the client's
	 * @return the body as text
	 */
	Mono<String> fetch(ScrapeBody into) {
		return this.client.get()
			.uri(this.url)
			.response((response, content) -> receive(response, content, into))
			.single();
	}

	private Mono<String> receive(HttpClientResponse response, ByteBufFlux content, ScrapeBody into) {
		int status = response.status().code();
		if (status != 200) {
			return Mono.error(new ScrapeFailedException("HTTP " + status));
		}
		String declared = response.responseHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
		if (declared != null && declared.length() < 19 && Long.parseLong(declared.trim()) > this.maxSize.toBytes()) {
			return Mono.error(tooBig());
		}
		into.reset();
		// The error cancels the body, and Reactor Netty then closes the connection
		// instead of
		// reading the rest of it.
		return content.handle((buffer, sink) -> {
			if (!into.append(buffer)) {
				sink.error(tooBig());
			}
		}).then(Mono.fromSupplier(into::text));
	}

	private ScrapeFailedException tooBig() {
		return new ScrapeFailedException("body exceeds max-scrape-size " + this.maxSize);
	}

	@Override
	public void close() {
		this.connections.dispose();
	}

}
