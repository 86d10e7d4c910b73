package dev.tokengap.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/**
 * The release figures' rules on known inputs: spikes and where they sit, reasoning told
 * from answers, the gates' directions and tolerances, the knee, and dataset prompts.
 */
class ReleaseFiguresTests {

	private static final long MS = 1_000_000L;

	@Test
	void aSpikeIsAtLeast100msAndFourTimesTheMedianOfTheEarlierGaps() {
		// 30 content events 10 ms apart, but the 16th arrives 300 ms late and the 28th 60
		// ms
		long[] arrivals = new long[30];
		for (int i = 1; i < arrivals.length; i++) {
			arrivals[i] = arrivals[i - 1] + ((i == 15) ? 300 : (i == 27) ? 60 : 10) * MS;
		}
		StreamResult stream = stream(arrivals, false);
		boolean[] spikes = stream.spikes(StreamShapeReport.SPIKE_FLOOR_NANOS, StreamShapeReport.SPIKE_FACTOR);
		assertThat(spikes).hasSize(29);
		for (int i = 0; i < spikes.length; i++) {
			assertThat(spikes[i]).as("gap %d", i).isEqualTo(i == 14);
		}
		assertThat(stream.third(14)).isEqualTo(1);
		assertThat(stream.third(0)).isZero();
		assertThat(stream.third(28)).isEqualTo(2);
		assertThat(stream.p99GapNanos()).isEqualTo(300 * MS);
		StreamShapeReport shape = new StreamShapeReport(List.of(stream));
		assertThat(shape.spikes).containsExactly(0, 1, 0);
		assertThat(shape.worstSpikeMs[1]).isEqualTo(300.0);
		assertThat(shape.unstable).isEqualTo(1);
	}

	@Test
	void aGapUnderTheFloorIsNoSpikeHoweverLargeAgainstTheMedian() {
		long[] arrivals = new long[12];
		for (int i = 1; i < arrivals.length; i++) {
			arrivals[i] = arrivals[i - 1] + ((i == 8) ? 90 : 2) * MS;
		}
		boolean[] spikes = stream(arrivals, false).spikes(StreamShapeReport.SPIKE_FLOOR_NANOS,
				StreamShapeReport.SPIKE_FACTOR);
		assertThat(spikes).doesNotContain(true);
	}

	@Test
	void reasoningEventsAreToldFromAnswerEvents() {
		StreamResult stream = new StreamResult(1, 4, 0);
		feed(stream, 5, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hmm\"}}]}\n\n");
		feed(stream, 9, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"so\"}}]}\n\n");
		feed(stream, 20,
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"the \\\"reasoning\\\":\\\"\"}}]}\n\n");
		feed(stream, 30, "data: [DONE]\n\n");
		stream.complete();
		assertThat(stream.ttftMs()).isEqualTo(5.0 / 1e6);
		assertThat(stream.firstAnswerMs()).isEqualTo(20.0 / 1e6);
		StreamResult responses = new StreamResult(1, 4, 0);
		feed(responses, 7, "event: response.reasoning_text.delta\ndata: {\"type\":\"response.reasoning_text.delta\","
				+ "\"delta\":\"x\"}\n\n");
		feed(responses, 11, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
				+ "\"delta\":\"y\"}\n\n");
		assertThat(responses.firstAnswerMs()).isEqualTo(11.0 / 1e6);
		StreamResult plain = new StreamResult(1, 4, 0);
		feed(plain, 3, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n");
		assertThat(plain.firstAnswerMs()).isNaN();
	}

	@Test
	void gatesHoldLatenciesDownAndThroughputsUpBeyondTheirTolerance() {
		Gate ttft = Gate.parse("p99_ttft_ms:10%:5");
		assertThat(ttft.worse(100, 110)).isFalse();
		assertThat(ttft.worse(100, 110.5)).isTrue();
		assertThat(ttft.worse(10, 15)).as("the absolute floor").isFalse();
		assertThat(ttft.worse(100, 50)).isFalse();
		assertThat(ttft.worse(100, Double.NaN)).as("a figure NEW lost").isTrue();
		assertThat(ttft.worse(Double.NaN, 5)).isFalse();
		Gate goodput = Gate.parse("token_goodput:0.1:0");
		assertThat(goodput.higherIsBetter()).isTrue();
		assertThat(goodput.worse(1000, 901)).isFalse();
		assertThat(goodput.worse(1000, 899)).isTrue();
		assertThat(goodput.worst(new double[] { 900, 1000, Double.NaN })).isEqualTo(900);
		assertThat(ttft.worst(new double[] { 90, 120 })).isEqualTo(120);
		assertThat(ttft).hasToString("p99_ttft_ms:10%:5");
		assertThat(Gate.DEFAULTS).containsOnlyKeys("p99_stream_p99_gap_ms", "smooth_stream_goodput", "p99_ttft_ms",
				"token_goodput", "failed");
		assertThatIllegalArgumentException().isThrownBy(() -> Gate.parse("p99_ttft_ms:10%"));
		assertThatIllegalArgumentException().isThrownBy(() -> Gate.parse("p99_ttft_ms:-1:0"));
	}

	@Test
	void theKneeIsThePointFurthestAboveTheDiagonalOfLatencyAgainstThroughput() {
		List<SweepSummary.Point> points = List.of(point(1, 160, 35), point(4, 580, 49), point(16, 1500, 57),
				point(64, 1600, 900));
		SweepSummary summary = new SweepSummary("max_concurrency", points);
		assertThat(summary.points.get(summary.knee).value()).isEqualTo(16);
		assertThat(summary.points.get(summary.goodputPeak).value()).isEqualTo(64);
		assertThat(summary.table()).contains("knee: max_concurrency 16");
		// latency that grows from the start: the knee comes early
		assertThat(SweepSummary.knee(List.of(point(1, 100, 10), point(2, 120, 800), point(4, 180, 1000)))).isZero();
	}

	@Test
	void datasetPromptsAreReplayedInOrderOrDrawnWithTheSeed(@TempDir Path dir) throws Exception {
		Path file = Files.writeString(dir.resolve("d.jsonl"), """
				{"prompt": "one \\"quoted\\" ünïcode prompt"}
				{"conversations": [{"from": "gpt", "value": "no"}, {"from": "human", "value": "two"}]}
				{"prompt": "three"}
				""", StandardCharsets.UTF_8);
		PromptDataset dataset = PromptDataset.load(file);
		assertThat(dataset.size()).isEqualTo(3);
		BenchOptions inOrder = BenchOptions.parse("--base-url", "http://x", "--num-prompts", "4", "--warmup", "1",
				"--dataset", file.toString());
		List<String> prompts = RequestPlan.of(inOrder, "m", dataset).stream().map(ReleaseFiguresTests::prompt).toList();
		assertThat(prompts).containsExactly("two", "three", "one \"quoted\" ünïcode prompt", "two");
		assertThat(RequestPlan.warmup(inOrder, "m", dataset)).extracting(ReleaseFiguresTests::prompt)
			.containsExactly("one \"quoted\" ünïcode prompt");
		BenchOptions sampled = BenchOptions.parse("--base-url", "http://x", "--num-prompts", "20", "--dataset",
				file.toString(), "--dataset-order", "sampled", "--seed", "5");
		List<String> drawn = RequestPlan.of(sampled, "m", dataset).stream().map(ReleaseFiguresTests::prompt).toList();
		assertThat(drawn)
			.isEqualTo(RequestPlan.of(sampled, "m", dataset).stream().map(ReleaseFiguresTests::prompt).toList());
		assertThat(drawn).containsAll(List.of("two", "three")).isNotEqualTo(prompts);
		Path bad = Files.writeString(dir.resolve("bad.jsonl"), "{\"text\": \"x\"}\n");
		assertThatIllegalArgumentException().isThrownBy(() -> PromptDataset.load(bad)).withMessageContaining(":1 ");
	}

	private static String prompt(RequestPlan.Request request) {
		JsonNode body = JsonMapper.builder().build().readTree(request.body());
		return body.path("messages").path(0).path("content").asString();
	}

	private static SweepSummary.Point point(double value, double throughput, double p99Ttft) {
		return new SweepSummary.Point(value, "p.json", throughput, throughput, p99Ttft, 10, value, 10, 0);
	}

	/** A chat stream whose content events arrive at the given times (nanoseconds). */
	private static StreamResult stream(long[] arrivals, boolean reasoning) {
		StreamResult stream = new StreamResult(1, arrivals.length, 0);
		for (long arrival : arrivals) {
			feed(stream, arrival, "data: {\"choices\":[{\"index\":0,\"delta\":{\""
					+ (reasoning ? "reasoning" : "content") + "\":\"x\"}}]}\n\n");
		}
		feed(stream, arrivals[arrivals.length - 1], "data: [DONE]\n\n");
		stream.complete();
		return stream;
	}

	private static void feed(StreamResult stream, long nanos, String text) {
		stream.onBytes(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8), nanos);
	}

	@Test
	void aSweepTakesAListOfConcurrencyLimitsOrOfRequestRates() {
		SweepCommand.Plan rates = SweepCommand.Plan
			.parse(new String[] { "--base-url", "http://x", "--out", "dir", "--request-rate", "1,2.5" });
		assertThat(rates.parameter()).isEqualTo("request_rate");
		assertThat(rates.values()).containsExactly(1.0, 2.5);
		BenchOptions point = rates.at(2.5);
		assertThat(point.requestRate()).isEqualTo(2.5);
		assertThat(point.json()).isEqualTo(Path.of("dir", "request-rate-2.50.json"));
		SweepCommand.Plan limits = SweepCommand.Plan
			.parse(new String[] { "--base-url", "http://x", "--out=dir", "--max-concurrency=1,4,16", "--warmup", "2" });
		assertThat(limits.at(16).maxConcurrency()).isEqualTo(16);
		assertThat(limits.at(16).warmup()).isEqualTo(2);
		assertThat(limits.at(16).json()).isEqualTo(Path.of("dir", "max-concurrency-16.json"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SweepCommand.Plan.parse(new String[] { "--base-url", "http://x", "--out", "dir" }));
		assertThatIllegalArgumentException().isThrownBy(() -> SweepCommand.Plan
			.parse(new String[] { "--base-url", "http://x", "--out", "d", "--max-concurrency", "1,2.5" }));
		assertThatIllegalArgumentException().isThrownBy(() -> SweepCommand.Plan.parse(new String[] { "--base-url",
				"http://x", "--out", "d", "--max-concurrency", "1", "--request-rate", "2" }));
	}

	@Test
	void theP99sConfidenceIntervalIsOrderStatisticsAroundItsRank() {
		double[] sixty = new double[60];
		for (int i = 0; i < sixty.length; i++) {
			sixty[i] = i + 1;
		}
		// n q = 59.4, 1.96 sqrt(n q (1 - q)) = 1.51: ranks 57 to 61, clamped to 60
		assertThat(Distribution.confidence95(sixty, 99)).containsExactly(57.0, 60.0);
		double[] thousand = new double[1000];
		for (int i = 0; i < thousand.length; i++) {
			thousand[i] = i + 1;
		}
		// n q = 990, spread 6.17: ranks 983 to 998
		assertThat(Distribution.confidence95(thousand, 99)).containsExactly(983.0, 998.0);
		assertThat(Distribution.confidence95(new double[] { 7 }, 99)).containsExactly(7.0, 7.0);
		assertThat(Distribution.confidence95(new double[0], 99)[0]).isNaN();
		// Wilson: 8 of 8 smooth streams, 0.676 to 1; 7 of 8, 0.529 to 0.978
		assertThat(Distribution.wilson95(8, 8)).containsExactly(new double[] { 0.6756, 1.0 }, within(5e-4));
		assertThat(Distribution.wilson95(7, 8)).containsExactly(new double[] { 0.5291, 0.9776 }, within(5e-4));
		assertThat(Distribution.wilson95(0, 0)[0]).isNaN();
	}

}
