package dev.tokengap.lab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufMono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.json.JsonMapper;

/**
 * The overhead benchmark's client: opens N streams to the {@link StampedSseBackend}
 * (directly or through a proxy), each on its own connection, and for every event computes
 * its one-way delay, from the backend's {@code : sent=} stamp to the socket read that
 * brought its last byte. It also counts events that arrived coalesced with another
 * (completed by the same socket read), and, given the proxy's pids, the proxy's CPU time
 * and peak RSS over the measured window.
 * <p>
 * Streams start spread over one second; events stamped in the first {@code --warmup-s}
 * seconds (connection set-up, JIT) are not measured. The run stops by itself: each stream
 * asks for a fixed number of events.
 */
public final class OverheadProbe {

	private OverheadProbe() {
	}

	public static void main(String[] args) throws IOException {
		Map<String, String> o = options(args);
		String url = o.getOrDefault("--url", "http://127.0.0.1:27100");
		String target = o.getOrDefault("--target", "direct");
		int streams = Integer.parseInt(o.getOrDefault("--streams", "50"));
		int intervalMs = Integer.parseInt(o.getOrDefault("--interval-ms", "20"));
		double warmupS = Double.parseDouble(o.getOrDefault("--warmup-s", "3"));
		double measureS = Double.parseDouble(o.getOrDefault("--measure-s", "20"));
		List<Integer> pids = pids(o.getOrDefault("--pids", ""));
		LabLogging.quiet();
		int events = (int) Math.ceil((warmupS + measureS + 1) * 1000 / intervalMs);
		long start = System.nanoTime();
		long windowStart = start + (long) (warmupS * 1e9);
		long windowEnd = windowStart + (long) (measureS * 1e9);
		ProcessStats stats = new ProcessStats(pids);
		Mono<Void> window = Mono.delay(Duration.ofNanos(windowStart - System.nanoTime()))
			.doOnNext((t) -> stats.begin())
			.then(Mono.delay(Duration.ofNanos((long) (measureS * 1e9))))
			.doOnNext((t) -> stats.end())
			.then();
		HttpClient client = HttpClient.create(ConnectionProvider.newConnection())
			.doOnChannelInit((observer, channel, address) -> channel.pipeline().addFirst("probe-read", new ReadStamp()))
			.compress(false)
			.responseTimeout(Duration.ofSeconds(30));
		List<ProbeStream> all = new ArrayList<>();
		AtomicInteger failures = new AtomicInteger();
		String uri = url + "/v1/chat/completions?interval_ms=" + intervalMs + "&events=" + events;
		String body = "{\"model\":\"bench\",\"stream\":true,\"max_tokens\":" + events
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		Flux<Void> load = Flux.range(0, streams)
			.flatMap((i) -> Mono.delay(Duration.ofNanos(1_000_000_000L * i / streams)).then(Mono.defer(() -> {
				ProbeStream stream = new ProbeStream(events, windowStart, windowEnd);
				synchronized (all) {
					all.add(stream);
				}
				return client.headers((h) -> h.set("content-type", "application/json"))
					.post()
					.uri(uri)
					.send(ByteBufMono.fromString(Mono.just(body)))
					.responseConnection((response, connection) -> connection.inbound()
						.receive()
						.doOnSubscribe((s) -> stream.stamp = connection.channel().pipeline().get(ReadStamp.class))
						.doOnNext(stream::read))
					.then()
					.onErrorResume((ex) -> {
						failures.incrementAndGet();
						stream.error = ex.toString();
						return Mono.empty();
					});
			})), streams);
		Mono.when(load, window).block(Duration.ofSeconds((long) (warmupS + measureS) + 120));
		Map<String, Object> result = summarise(o, target, streams, intervalMs, measureS, all, failures.get(), stats);
		String line = JsonMapper.builder().build().writeValueAsString(result);
		System.out.println(line);
		String out = o.get("--out");
		if (out != null) {
			Files.writeString(Path.of(out), line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		}
		System.exit(0);
	}

	private static Map<String, Object> summarise(Map<String, String> o, String target, int streams, int intervalMs,
			double measureS, List<ProbeStream> all, int failures, ProcessStats stats) {
		int n = all.stream().mapToInt((s) -> s.measured).sum();
		long[] delays = new long[n];
		int at = 0;
		long coalesced = 0;
		long received = 0;
		int incomplete = 0;
		for (ProbeStream s : all) {
			System.arraycopy(s.delays, 0, delays, at, s.measured);
			at += s.measured;
			coalesced += s.coalesced;
			received += s.total;
			if (s.total < s.expected && s.error == null) {
				incomplete++;
			}
		}
		Arrays.sort(delays);
		Map<String, Object> r = new LinkedHashMap<>();
		r.put("session", o.getOrDefault("--session", ""));
		r.put("round", Integer.parseInt(o.getOrDefault("--round", "0")));
		r.put("target", target);
		r.put("load", streams + "x" + intervalMs + "ms");
		r.put("streams", streams);
		r.put("interval_ms", intervalMs);
		r.put("events_per_s_offered", streams * 1000.0 / intervalMs);
		r.put("measured_events", n);
		r.put("received_events", received);
		r.put("errors", failures);
		r.put("incomplete_streams", incomplete);
		r.put("coalesced_events", coalesced);
		r.put("coalesced_fraction", (n == 0) ? null : (double) coalesced / n);
		r.put("p50_us", us(delays, 0.50));
		r.put("p99_us", us(delays, 0.99));
		r.put("p999_us", us(delays, 0.999));
		r.put("max_us", (n == 0) ? null : delays[n - 1] / 1e3);
		r.put("mean_us", (n == 0) ? null : Arrays.stream(delays).average().orElse(0) / 1e3);
		if (stats.measured()) {
			double cpu = stats.cpuSeconds();
			r.put("proxy_cpu_s", cpu);
			r.put("proxy_cpu_s_per_100k_events", (n == 0) ? null : cpu / n * 100_000);
			r.put("proxy_peak_rss_mib", stats.peakRssKib() / 1024.0);
		}
		r.put("measure_s", measureS);
		r.put("loadavg_1m", loadAverage());
		return r;
	}

	/**
	 * The machine is shared: the 1-minute load average at the end of the run goes with
	 * its figures.
	 */
	private static Double loadAverage() {
		try {
			return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
	}

	/** Nearest-rank percentile in microseconds. */
	private static Double us(long[] sorted, double q) {
		if (sorted.length == 0) {
			return null;
		}
		int rank = (int) Math.ceil(q * sorted.length);
		return sorted[Math.max(0, rank - 1)] / 1e3;
	}

	private static Map<String, String> options(String[] args) {
		Map<String, String> o = new LinkedHashMap<>();
		for (int i = 0; i + 1 < args.length; i += 2) {
			o.put(args[i], args[i + 1]);
		}
		return o;
	}

	private static List<Integer> pids(String list) {
		List<Integer> pids = new ArrayList<>();
		for (String pid : list.split(",")) {
			if (!pid.isBlank()) {
				pids.add(Integer.parseInt(pid.trim()));
			}
		}
		return pids;
	}

}
