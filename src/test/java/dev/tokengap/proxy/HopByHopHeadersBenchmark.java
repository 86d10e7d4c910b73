package dev.tokengap.proxy;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of one header copy ({@link HopByHopHeaders#copy}, twice per request): the names a
 * {@code Connection} line gives compared in place, against the set of lower-cased names
 * it used until 90e6960 ({@link #lowerCasedSet}, kept here as the baseline). One op = one
 * copy of an OpenAI client's request headers or of vLLM's response headers.
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) org.openjdk.jmh.Main \
 *     HopByHopHeadersBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class HopByHopHeadersBenchmark {

	private static final HopByHopHeaders COPY = HopByHopHeaders.andAlso("host", "content-length");

	private static final AsciiString[] DROPPED = { AsciiString.of("connection"), AsciiString.of("keep-alive"),
			AsciiString.of("proxy-connection"), AsciiString.of("proxy-authenticate"),
			AsciiString.of("proxy-authorization"), AsciiString.of("te"), AsciiString.of("trailer"),
			AsciiString.of("transfer-encoding"), AsciiString.of("upgrade"), AsciiString.of("host"),
			AsciiString.of("content-length") };

	@Param({ "request", "response" })
	public String headers;

	private HttpHeaders from;

	@Setup
	public void setUp() {
		this.from = "request".equals(this.headers)
				? new DefaultHttpHeaders().add("Host", "127.0.0.1:8000")
					.add("Accept-Encoding", "gzip, deflate")
					.add("Connection", "keep-alive")
					.add("Accept", "application/json")
					.add("Content-Type", "application/json")
					.add("User-Agent", "OpenAI/Python 1.82.0")
					.add("X-Stainless-Lang", "python")
					.add("X-Stainless-Package-Version", "1.82.0")
					.add("X-Stainless-OS", "Linux")
					.add("X-Stainless-Arch", "x64")
					.add("X-Stainless-Runtime", "CPython")
					.add("X-Stainless-Runtime-Version", "3.12.3")
					.add("Authorization", "Bearer sk-0123456789")
					.add("X-Stainless-Async", "false")
					.add("X-Stainless-Retry-Count", "0")
					.add("X-Stainless-Read-Timeout", "600")
					.add("Content-Length", "187")
				: new DefaultHttpHeaders().add("date", "Fri, 04 Dec 2026 23:59:59 GMT")
					.add("server", "uvicorn")
					.add("content-length", "512")
					.add("content-type", "application/json")
					.add("x-request-id", "chatcmpl-0123456789abcdef");
	}

	@Benchmark
	public HttpHeaders copy() {
		HttpHeaders to = new DefaultHttpHeaders();
		COPY.copy(this.from, to);
		return to;
	}

	@Benchmark
	public HttpHeaders lowerCasedSet() {
		HttpHeaders to = new DefaultHttpHeaders();
		Set<String> named = connectionNamed(this.from);
		for (var it = this.from.iteratorCharSequence(); it.hasNext();) {
			var entry = it.next();
			CharSequence name = entry.getKey();
			if (!dropped(name) && (named.isEmpty() || !named.contains(name.toString().toLowerCase(Locale.ROOT)))) {
				to.add(name, entry.getValue());
			}
		}
		return to;
	}

	private static boolean dropped(CharSequence name) {
		for (AsciiString candidate : DROPPED) {
			if (candidate.contentEqualsIgnoreCase(name)) {
				return true;
			}
		}
		return false;
	}

	private static Set<String> connectionNamed(HttpHeaders headers) {
		List<String> lines = headers.getAll(HttpHeaderNames.CONNECTION);
		if (lines.isEmpty()) {
			return Set.of();
		}
		Set<String> names = new HashSet<>();
		for (String line : lines) {
			for (String token : line.split(",")) {
				names.add(token.trim().toLowerCase(Locale.ROOT));
			}
		}
		return names;
	}

}
