package dev.tokengap.backend;

import java.util.Arrays;
import java.util.TreeSet;

import dev.tokengap.backend.PrometheusTextParser.SampleVisitor;
import dev.tokengap.metrics.BucketEdges;

/**
 * Reads vLLM's engine state and histogram bucket edges from one {@code /metrics}
 * exposition, under the metric names vLLM has used since 0.6 (see {@code vllm-wire.md},
 * "Metric names over time").
 *
 * <p>
 * Series of one name that differ by {@code engine} (data parallel), {@code pid} (several
 * API server processes) or any other label are combined as the metrics contract says:
 * counts and counters summed, KV usage the maximum. {@code _created} series are never
 * read.
 *
 * <p>
 * Not thread-safe: one read at a time per instance.
 */
public final class VllmMetricsReader {

	private final PrometheusTextParser parser = new PrometheusTextParser();

	private final StateVisitor state = new StateVisitor();

	/**
	 * Reads the engine's state.
	 * @param text a {@code /metrics} body
	 * @param nanos the time to stamp the sample with
	 * @return the state, or {@code null} when the text has none of vLLM's state metrics
	 */
	public EngineSample read(CharSequence text, long nanos) {
		this.state.reset();
		this.parser.parse(text, this.state);
		return this.state.sample(nanos);
	}

	/**
	 * The identity of the engine whose exposition the last {@link #read} saw.
	 * @return the identity, or {@code null} before the first read
	 */
	public EngineIdentity identity() {
		return this.state.identity();
	}

	/**
	 * Reads the bucket edges of vLLM's TTFT, inter-token latency (or, on older engines,
	 * time per output token) and end-to-end latency histograms, for the {@code auto}
	 * bucket profile.
	 * @param text a {@code /metrics} body
	 * @return the edges, or {@code null} when a family is missing or its edges are
	 * unusable
	 */
	public BucketEdges readEdges(CharSequence text) {
		EdgesVisitor edges = new EdgesVisitor();
		this.parser.parse(text, edges);
		return edges.edges();
	}

	/**
	 * The malformed lines skipped since this reader was created.
	 * @return the count over all reads
	 */
	public long malformedLines() {
		return this.parser.malformedLines();
	}

	/**
	 * Finds a name in a short table; vLLM's names share a prefix, so the comparison
	 * starts at the end.
	 */
	static int indexOf(CharSequence name, String[] names) {
		for (int i = 0; i < names.length; i++) {
			if (TextSlice.contentEquals(name, names[i])) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Sums (or, for KV usage, maximises) the state metrics over all their series. Of the
	 * by-reason and by-source families only one label value is summed, but any series
	 * makes the family present.
	 */
	private static final class StateVisitor implements SampleVisitor {

		private static final int RUNNING = 0, WAITING = 1, SWAPPED = 2, KV = 3, KV_V0 = 4, PREEMPTIONS = 5,
				PREEMPTIONS_BARE = 6, PROMPT = 7, PROMPT_BARE = 8, GENERATION = 9, GENERATION_BARE = 10,
				WAITING_BY_REASON = 11, PROMPT_BY_SOURCE = 12, PROMPT_BY_SOURCE_BARE = 13, PREFILL_SECONDS = 14,
				PREFILL_REQUESTS = 15, PREFILL_TOKENS = 16, FINISHED = 17, FINISHED_PREEMPTIONS = 18;

		// Some releases write counters without the _total suffix; the suffixed name wins
		// when both appear, as does the V1 KV name over the V0 one.
		private static final String[] NAMES = { "vllm:num_requests_running", "vllm:num_requests_waiting",
				"vllm:num_requests_swapped", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
				"vllm:num_preemptions_total", "vllm:num_preemptions", "vllm:prompt_tokens_total", "vllm:prompt_tokens",
				"vllm:generation_tokens_total", "vllm:generation_tokens", "vllm:num_requests_waiting_by_reason",
				"vllm:prompt_tokens_by_source_total", "vllm:prompt_tokens_by_source",
				"vllm:request_prefill_time_seconds_sum", "vllm:request_prefill_time_seconds_count",
				"vllm:request_prefill_kv_computed_tokens_sum", "vllm:request_num_preemptions_count",
				"vllm:request_num_preemptions_sum" };

		// Identity: prometheus_client's process collector, or (multiprocess mode, where
		// it is absent) the counter's creation time.
		private static final String START_TIME = "process_start_time_seconds";

		private static final String CREATED = "vllm:num_preemptions_created";

		private static final int START = -2, CREATED_AT = -3;

		private final double[] values = new double[NAMES.length];

		private final int[] series = new int[NAMES.length];

		private final TreeSet<String> engines = new TreeSet<>();

		private final TreeSet<String> models = new TreeSet<>();

		private double startTime;

		private double createdAt;

		private EngineIdentity identity;

		private int matched = -1;

		void reset() {
			Arrays.fill(this.values, 0);
			Arrays.fill(this.series, 0);
			this.engines.clear();
			this.models.clear();
			this.startTime = Double.NaN;
			this.createdAt = Double.NaN;
		}

		@Override
		public boolean wants(CharSequence name) {
			if (name.length() > 5 && name.charAt(4) == ':') {
				this.matched = indexOf(name, NAMES);
				if (this.matched < 0 && TextSlice.contentEquals(name, CREATED)) {
					this.matched = CREATED_AT;
				}
			}
			else {
				this.matched = TextSlice.contentEquals(name, START_TIME) ? START : -1;
			}
			return this.matched != -1;
		}

		@Override
		public void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis) {
			int i = this.matched;
			if (i == START || i == CREATED_AT) {
				startTime(i, value);
				return;
			}
			if (i == RUNNING) {
				addLabel(this.engines, labels.get("engine"));
				addLabel(this.models, labels.get("model_name"));
			}
			this.series[i]++;
			if (i == KV || i == KV_V0) {
				this.values[i] = (this.series[i] > 1) ? Math.max(this.values[i], value) : value;
			}
			else if (counted(i, labels)) {
				this.values[i] += value;
			}
		}

		private static boolean counted(int i, SampleLabels labels) {
			if (i == WAITING_BY_REASON) {
				return TextSlice.contentEquals(labels.get("reason"), "capacity");
			}
			if (i == PROMPT_BY_SOURCE || i == PROMPT_BY_SOURCE_BARE) {
				return TextSlice.contentEquals(labels.get("source"), "local_compute");
			}
			return true;
		}

		// Several API-server processes (pid label) each have a start:
		// the oldest is the server's.
		private void startTime(int kind, double value) {
			if (kind == START) {
				this.startTime = Double.isNaN(this.startTime) ? value : Math.min(this.startTime, value);
			}
			else {
				this.createdAt = Double.isNaN(this.createdAt) ? value : Math.min(this.createdAt, value);
			}
		}

		private static void addLabel(TreeSet<String> into, CharSequence value) {
			if (value != null && into.size() < 64) {
				into.add(value.toString());
			}
		}

		EngineIdentity identity() {
			return this.identity;
		}

		EngineSample sample(long nanos) {
			this.identity = new EngineIdentity(Double.isNaN(this.startTime) ? this.createdAt : this.startTime,
					String.join(",", this.engines), String.join(",", this.models));
			for (int count : this.series) {
				if (count > 0) {
					return new EngineSample(nanos, value(RUNNING, RUNNING), value(WAITING, WAITING),
							value(SWAPPED, SWAPPED), value(KV, KV_V0), value(PREEMPTIONS, PREEMPTIONS_BARE),
							value(PROMPT, PROMPT_BARE), value(GENERATION, GENERATION_BARE),
							value(WAITING_BY_REASON, WAITING_BY_REASON), value(PROMPT_BY_SOURCE, PROMPT_BY_SOURCE_BARE),
							value(PREFILL_SECONDS, PREFILL_SECONDS), value(PREFILL_REQUESTS, PREFILL_REQUESTS),
							value(PREFILL_TOKENS, PREFILL_TOKENS), value(FINISHED, FINISHED),
							value(FINISHED_PREEMPTIONS, FINISHED_PREEMPTIONS));
				}
			}
			return null;
		}

		private double value(int preferred, int fallback) {
			return (this.series[preferred] > 0) ? this.values[preferred]
					: (this.series[fallback] > 0) ? this.values[fallback] : Double.NaN;
		}

	}

	/**
	 * Collects the {@code le} values of the three families whose edges tokengap shares.
	 */
	private static final class EdgesVisitor implements SampleVisitor {

		private static final int TTFT = 0, ITL = 1, TPOT = 2, REQUEST = 3;

		private static final String[] NAMES = { "vllm:time_to_first_token_seconds_bucket",
				"vllm:inter_token_latency_seconds_bucket", "vllm:time_per_output_token_seconds_bucket",
				"vllm:e2e_request_latency_seconds_bucket" };

		private final BucketEdgeCollector[] families = { new BucketEdgeCollector(), new BucketEdgeCollector(),
				new BucketEdgeCollector(), new BucketEdgeCollector() };

		private int matched = -1;

		@Override
		public boolean wants(CharSequence name) {
			this.matched = indexOf(name, NAMES);
			return this.matched >= 0;
		}

		@Override
		public void sample(CharSequence name, SampleLabels labels, double value, long timestampMillis) {
			this.families[this.matched].add(labels);
		}

		BucketEdges edges() {
			double[] ttft = this.families[TTFT].edges();
			double[] itl = this.families[ITL].edges();
			double[] request = this.families[REQUEST].edges();
			if (itl == null) {
				itl = this.families[TPOT].edges();
			}
			if (ttft == null || itl == null || request == null) {
				return null;
			}
			try {
				return new BucketEdges(ttft, itl, request);
			}
			catch (IllegalArgumentException ex) {
				// e.g. a custom histogram with a zero or negative edge, which tokengap
				// cannot mirror
				return null;
			}
		}

	}

}
