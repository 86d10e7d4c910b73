package dev.tokengap.metrics;

import java.util.concurrent.atomic.AtomicReferenceArray;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * The catalogue of OpenTelemetry's GenAI metric names (semantic conventions, still
 * "development"): the same observations as the Prometheus series, pushed over OTLP under
 * those names with the same bucket edges.
 *
 * <p>
 * Registered on the OTLP registry alone, so {@code /actuator/prometheus} is unchanged.
 * Instruments are bound once per (model, endpoint) pair, as {@link StreamMeters} are: per
 * event the only call is a {@code record(double)}. Without an OTLP registry there is no
 * catalogue, and nothing is recorded.
 */
public final class GenAiMeters {

	/** Client-visible TTFT; tokengap counts the first <em>content</em> chunk. */
	public static final String TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk";

	/** Every gap between two content chunks. */
	public static final String TIME_PER_OUTPUT_CHUNK = "gen_ai.client.operation.time_per_output_chunk";

	/** TPOT of each completed stream. */
	public static final String TIME_PER_OUTPUT_TOKEN = "gen_ai.server.time_per_output_token";

	/** Request received to last byte written. */
	public static final String REQUEST_DURATION = "gen_ai.server.request.duration";

	public static final String OPERATION_NAME = "gen_ai.operation.name";

	public static final String PROVIDER_NAME = "gen_ai.provider.name";

	public static final String REQUEST_MODEL = "gen_ai.request.model";

	public static final String ERROR_TYPE = "error.type";

	/** The provider: tokengap sits in front of vLLM. */
	public static final String PROVIDER = "vllm";

	private final MeterRegistry registry;

	private final BucketEdges edges;

	/**
	 * Creates the catalogue; instruments are registered per (model, endpoint) on first
	 * use.
	 * @param registry the OTLP registry
	 * @param edges the bucket edges of the Prometheus series
	 */
	public GenAiMeters(MeterRegistry registry, BucketEdges edges) {
		this.registry = registry;
		this.edges = edges;
	}

	/**
	 * The convention's {@code gen_ai.operation.name} of an endpoint.
	 * @param endpoint the endpoint
	 * @return the operation name, or null for an endpoint the contract gives none
	 */
	public static String operation(Endpoint endpoint) {
		return switch (endpoint) {
			case CHAT_COMPLETIONS -> "chat";
			case COMPLETIONS -> "text_completion";
			case RESPONSES -> "responses";
			case MESSAGES -> "messages";
			case TRANSCRIPTIONS -> "transcription";
			case TRANSLATIONS, OTHER -> null;
		};
	}

	/**
	 * The instruments of one (model, endpoint) pair.
	 * @param model the bounded model label
	 * @param endpoint the endpoint
	 * @return the instruments, or null when the endpoint has no operation name
	 */
	Series series(String model, Endpoint endpoint) {
		String operation = operation(endpoint);
		return (operation != null) ? new Series(model, operation) : null;
	}

	/** The instruments of one (model, endpoint) pair. */
	final class Series {

		/** Statuses a request that was not streamed can fail with, by code. */
		private static final int STATUSES = 600;

		final DistributionSummary timeToFirstChunk;

		final DistributionSummary timePerOutputChunk;

		final DistributionSummary timePerOutputToken;

		final DistributionSummary duration;

		private final DistributionSummary[] failedStreams = new DistributionSummary[StreamOutcome.values().length];

		private final AtomicReferenceArray<DistributionSummary> failedRequests = new AtomicReferenceArray<>(STATUSES);

		private final Tags tags;

		Series(String model, String operation) {
			this.tags = Tags.of(OPERATION_NAME, operation, PROVIDER_NAME, PROVIDER, REQUEST_MODEL, model);
			this.timeToFirstChunk = summary(TIME_TO_FIRST_CHUNK, "Time to the first content chunk",
					GenAiMeters.this.edges.ttft(), this.tags);
			this.timePerOutputChunk = summary(TIME_PER_OUTPUT_CHUNK, "Time between consecutive content chunks",
					GenAiMeters.this.edges.itl(), this.tags);
			this.timePerOutputToken = summary(TIME_PER_OUTPUT_TOKEN, "Time per output token after the first",
					GenAiMeters.this.edges.itl(), this.tags);
			this.duration = duration(this.tags);
			for (StreamOutcome outcome : StreamOutcome.values()) {
				if (outcome != StreamOutcome.COMPLETED) {
					this.failedStreams[outcome.ordinal()] = duration(this.tags.and(ERROR_TYPE, outcome.label()));
				}
			}
		}

		/**
		 * The duration instrument of a stream that ended with this outcome.
		 * @param outcome the outcome
		 * @return its instrument
		 */
		DistributionSummary stream(StreamOutcome outcome) {
			return (outcome == StreamOutcome.COMPLETED) ? this.duration : this.failedStreams[outcome.ordinal()];
		}

		/**
		 * The duration instrument of a request that was not streamed.
		 * @param status the HTTP status sent
		 * @return its instrument ({@code error.type} the status from 400 on)
		 */
		DistributionSummary request(int status) {
			if (status < 400 || status >= STATUSES) {
				return this.duration;
			}
			DistributionSummary failed = this.failedRequests.get(status);
			if (failed == null) {
				failed = duration(this.tags.and(ERROR_TYPE, Integer.toString(status)));
				this.failedRequests.set(status, failed);
			}
			return failed;
		}

		private DistributionSummary duration(Tags tags) {
			return summary(REQUEST_DURATION, "Request received by tokengap to last byte written to the client",
					GenAiMeters.this.edges.request(), tags);
		}

		private DistributionSummary summary(String name, String description, double[] edges, Tags tags) {
			return DistributionSummary.builder(name)
				.description(description)
				.baseUnit("s")
				.tags(tags)
				.serviceLevelObjectives(edges)
				.register(GenAiMeters.this.registry);
		}

	}

}
