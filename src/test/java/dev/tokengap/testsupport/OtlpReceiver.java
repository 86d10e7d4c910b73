package dev.tokengap.testsupport;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.zip.GZIPInputStream;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A real OTLP/HTTP receiver on loopback: {@code POST /v1/traces} and
 * {@code POST /v1/metrics} in protobuf (gzip or not), decoded with OpenTelemetry's own
 * protobuf classes and kept for the test to read. Anything else is answered 404 and
 * counted as {@link #rejected()}; a body that does not decode is answered 400.
 */
public final class OtlpReceiver implements AutoCloseable {

	private static final String PROTOBUF = "application/x-protobuf";

	private final List<Received<Span>> spans = new CopyOnWriteArrayList<>();

	private final List<Received<Metric>> metrics = new CopyOnWriteArrayList<>();

	private final List<String> rejected = new CopyOnWriteArrayList<>();

	private final DisposableServer server;

	private OtlpReceiver() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle(this::receive).bindNow();
	}

	/**
	 * Starts a receiver on a free loopback port.
	 * @return the receiver
	 */
	public static OtlpReceiver start() {
		return new OtlpReceiver();
	}

	/** The base URL ({@code http://127.0.0.1:port}). */
	public String url() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/** The traces endpoint, as an exporter's endpoint property takes it. */
	public String tracesUrl() {
		return url() + "/v1/traces";
	}

	/** The metrics endpoint, as an exporter's endpoint property takes it. */
	public String metricsUrl() {
		return url() + "/v1/metrics";
	}

	private Mono<Void> receive(HttpServerRequest request, HttpServerResponse response) {
		String path = request.fullPath();
		boolean post = request.method().equals(HttpMethod.POST);
		if (!post || !(path.equals("/v1/traces") || path.equals("/v1/metrics"))) {
			this.rejected.add(request.method() + " " + request.uri());
			return response.status(404).send().then();
		}
		boolean gzip = "gzip".equalsIgnoreCase(request.requestHeaders().get(HttpHeaderNames.CONTENT_ENCODING));
		return request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap((bytes) -> {
			try {
				byte[] answer = decode(path, gzip ? gunzip(bytes) : bytes);
				return response.header(HttpHeaderNames.CONTENT_TYPE, PROTOBUF)
					.send(ByteBufFlux.fromInbound(Mono.just(answer)))
					.then();
			}
			catch (IOException ex) {
				this.rejected.add("undecodable " + path + ": " + ex.getMessage());
				return response.status(400).sendString(Mono.just(ex.getMessage())).then();
			}
		});
	}

	private byte[] decode(String path, byte[] body) throws IOException {
		if (path.equals("/v1/traces")) {
			ExportTraceServiceRequest export = ExportTraceServiceRequest.parseFrom(body);
			for (ResourceSpans resource : export.getResourceSpansList()) {
				for (ScopeSpans scope : resource.getScopeSpansList()) {
					for (Span span : scope.getSpansList()) {
						this.spans.add(new Received<>(resource.getResource(), scope.getScope().getName(), span));
					}
				}
			}
			return ExportTraceServiceResponse.getDefaultInstance().toByteArray();
		}
		ExportMetricsServiceRequest export = ExportMetricsServiceRequest.parseFrom(body);
		for (ResourceMetrics resource : export.getResourceMetricsList()) {
			for (ScopeMetrics scope : resource.getScopeMetricsList()) {
				for (Metric metric : scope.getMetricsList()) {
					this.metrics.add(new Received<>(resource.getResource(), scope.getScope().getName(), metric));
				}
			}
		}
		return ExportMetricsServiceResponse.getDefaultInstance().toByteArray();
	}

	private static byte[] gunzip(byte[] bytes) throws IOException {
		try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
			return in.readAllBytes();
		}
	}

	/** Every span received so far, in arrival order. */
	public List<Received<Span>> spans() {
		return List.copyOf(this.spans);
	}

	/**
	 * Every metric received so far (one per export that carried it), in arrival order.
	 */
	public List<Received<Metric>> metrics() {
		return List.copyOf(this.metrics);
	}

	/** Requests refused: wrong method or path, or a body that did not decode. */
	public List<String> rejected() {
		return List.copyOf(this.rejected);
	}

	/**
	 * Waits for a span that matches.
	 * @param matching what the span must satisfy
	 * @param timeout how long to wait at most
	 * @return the first matching span
	 * @throws AssertionError when none arrived in time
	 */
	public Received<Span> awaitSpan(Predicate<Received<Span>> matching, Duration timeout) {
		return await(this.spans, matching, timeout, "span");
	}

	/**
	 * Waits for a metric that matches; the latest export of it wins.
	 * @param matching what the metric must satisfy
	 * @param timeout how long to wait at most
	 * @return the last matching metric received
	 * @throws AssertionError when none arrived in time
	 */
	public Received<Metric> awaitMetric(Predicate<Received<Metric>> matching, Duration timeout) {
		await(this.metrics, matching, timeout, "metric");
		List<Received<Metric>> all = metrics();
		for (int i = all.size() - 1; i >= 0; i--) {
			if (matching.test(all.get(i))) {
				return all.get(i);
			}
		}
		throw new IllegalStateException("unreachable");
	}

	private <T> Received<T> await(List<Received<T>> received, Predicate<Received<T>> matching, Duration timeout,
			String what) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			for (Received<T> item : received) {
				if (matching.test(item)) {
					return item;
				}
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("No matching " + what + " within " + timeout + "; received " + received.size()
						+ ", rejected " + this.rejected);
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError("Interrupted", ex);
			}
		}
	}

	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
	}

	/** Lower-case hex of a trace or span id as OTLP carries it (bytes). */
	public static String hex(ByteString id) {
		return HexFormat.of().formatHex(id.toByteArray());
	}

	/**
	 * The value of an attribute, if present.
	 * @param attributes the attributes
	 * @param key the key
	 * @return its value
	 */
	public static Optional<AnyValue> attribute(List<KeyValue> attributes, String key) {
		for (KeyValue kv : attributes) {
			if (kv.getKey().equals(key)) {
				return Optional.of(kv.getValue());
			}
		}
		return Optional.empty();
	}

	/**
	 * The attributes as a key to plain Java value list (string, long, double, boolean).
	 * @param attributes the attributes
	 * @return the plain values by key
	 */
	public static java.util.Map<String, Object> plain(List<KeyValue> attributes) {
		java.util.Map<String, Object> values = new java.util.LinkedHashMap<>();
		for (KeyValue kv : attributes) {
			values.put(kv.getKey(), plain(kv.getValue()));
		}
		return values;
	}

	private static Object plain(AnyValue value) {
		return switch (value.getValueCase()) {
			case STRING_VALUE -> value.getStringValue();
			case INT_VALUE -> value.getIntValue();
			case DOUBLE_VALUE -> value.getDoubleValue();
			case BOOL_VALUE -> value.getBoolValue();
			default -> value.toString();
		};
	}

	/**
	 * One item received, with the resource and instrumentation scope it came under.
	 *
	 * @param <T> a span or a metric
	 * @param resource the resource (its {@code service.name}, ...)
	 * @param scope the instrumentation scope's name
	 * @param item the span or metric
	 */
	public record Received<T>(Resource resource, String scope, T item) {

		/** The resource's {@code service.name}, or "" when absent. */
		public String serviceName() {
			return attribute(this.resource.getAttributesList(), "service.name").map(AnyValue::getStringValue)
				.orElse("");
		}

	}

}
