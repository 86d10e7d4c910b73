package dev.tokengap.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * A run's record as {@code --json} writes it: the schema and its version, the workload
 * (what must match for two runs to compare), every figure of the table under
 * {@code vllm bench serve}'s keys and ours, the engine's side of the window and the
 * client-vs-tokengap-vs-engine comparison. docs/bench-record.md documents each key.
 */
final class RunRecord {

	static final String SCHEMA = "tokengap-bench-run";

	/** Raised when a key changes meaning or goes; new keys keep the version. */
	static final int SCHEMA_VERSION = 1;

	private RunRecord() {
	}

	static Map<String, Object> of(BenchCommand.Result result) {
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("schema", SCHEMA);
		json.put("schema_version", SCHEMA_VERSION);
		json.put("tokengap_version", RunRecord.class.getPackage().getImplementationVersion());
		json.put("date", Instant.now().toString());
		json.put("workload", workload(result.options(), result.model()));
		json.put("headers", new TreeSet<>(result.options().headers().keySet()));
		json.putAll(result.report().json());
		json.put("model_id", result.model());
		json.put("engine", result.engine());
		json.put("comparison", (result.comparison() != null) ? result.comparison().json() : null);
		return json;
	}

	static String text(BenchCommand.Result result) {
		return JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build().writeValueAsString(of(result));
	}

	/** What was sent: two runs compare only when these are equal. */
	static Map<String, Object> workload(BenchOptions options, String model) {
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("endpoint", options.path());
		json.put("model", model);
		json.put("num_prompts", options.numPrompts());
		json.put("request_rate", Double.isInfinite(options.requestRate()) ? "inf" : options.requestRate());
		json.put("max_concurrency", (options.maxConcurrency() > 0) ? options.maxConcurrency() : null);
		json.put("input_len", range(options.inputLen()));
		json.put("output_len", range(options.outputLen()));
		json.put("seed", options.seed());
		json.put("warmup", options.warmup());
		json.put("dataset", dataset(options));
		json.put("goodput_slo", options.goodput().toString());
		json.put("stall_threshold_ms", options.stallThresholdMs());
		return json;
	}

	private static Map<String, Object> range(BenchOptions.LengthRange range) {
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("min", range.min());
		json.put("max", range.max());
		return json;
	}

	private static Map<String, Object> dataset(BenchOptions options) {
		if (options.dataset() == null) {
			return null;
		}
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("file", options.dataset().getFileName().toString());
		json.put("sha256", sha256(options));
		json.put("order", options.datasetSampled() ? "sampled" : "in-order");
		return json;
	}

	private static String sha256(BenchOptions options) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(options.dataset()));
			return HexFormat.of().formatHex(digest);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
