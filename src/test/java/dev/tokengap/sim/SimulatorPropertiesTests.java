package dev.tokengap.sim;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SimulatorPropertiesTests {

	@Test
	void defaultsGiveARealisticDemo() {
		SimulatorProperties defaults = SimulatorProperties.defaults();
		assertThat(defaults.port()).isEqualTo(8000);
		assertThat(defaults.model()).isEqualTo("sim-llama-3-8b");
		assertThat(defaults.seed()).isEqualTo(42);
		assertThat(defaults.maxNumSeqs()).isEqualTo(64);
		assertThat(defaults.maxNumBatchedTokens()).isEqualTo(2048);
		assertThat(defaults.chunkedPrefill()).isTrue();
		assertThat(defaults.blockSize()).isEqualTo(16);
		assertThat(defaults.numKvBlocks()).isEqualTo(4096);
		assertThat(defaults.stepFixedCost()).isEqualTo(Duration.ofMillis(20));
		assertThat(defaults.stepCostPerSeq()).isEqualTo(Duration.ofNanos(250_000));
		assertThat(defaults.stepCostPerPrefillToken()).isEqualTo(Duration.ofNanos(20_000));
		assertThat(defaults.defaultMaxTokens()).isEqualTo(128);
		assertThat(defaults.maxModelLen()).isEqualTo(8192);
		assertThat(defaults.metricsDelay()).isZero();
		assertThat(defaults.charsPerToken()).isEqualTo(4);
		assertThat(defaults.traceCapacity()).isEqualTo(100_000);
		assertThat(defaults.reasoningShare()).isZero();
		assertThat(defaults.maxNumQueuedReqs()).as("admits everything, as vLLM by default").isZero();
		assertThat(defaults.prefixCaching()).as("as vLLM v1").isTrue();
		assertThat(defaults.perRequestMetrics()).as("as vLLM without --enable-per-request-metrics").isFalse();
	}

	@Test
	void reasoningShareIsAFractionBetweenZeroAndOne() {
		SimulatorProperties bound = new Binder(
				new MapConfigurationPropertySource(Map.of("tokengap.sim.reasoning-share", "0.25")))
			.bindOrCreate("tokengap.sim", Bindable.of(SimulatorProperties.class));
		assertThat(bound.reasoningShare()).isEqualTo(0.25);
		new ApplicationContextRunner().withUserConfiguration(Bound.class)
			.withPropertyValues("tokengap.sim.reasoning-share=1.5")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("reasoning-share"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SimulatorProperties.defaults().toBuilder().reasoningShare(-0.1).build())
			.withMessageContaining("reasoning-share");
	}

	@Test
	void bindsKebabCaseKeysWithDurationUnits() {
		Map<String, String> source = Map.of("tokengap.sim.step-fixed-cost", "5ms", "tokengap.sim.step-cost-per-seq",
				"300us", "tokengap.sim.chunked-prefill", "false", "tokengap.sim.num-kv-blocks", "1024",
				"tokengap.sim.metrics-delay", "2s", "tokengap.sim.max-num-queued-reqs", "16",
				"tokengap.sim.prefix-caching", "false", "tokengap.sim.per-request-metrics", "true");
		SimulatorProperties bound = new Binder(new MapConfigurationPropertySource(source)).bindOrCreate("tokengap.sim",
				Bindable.of(SimulatorProperties.class));
		assertThat(bound.stepFixedCost()).isEqualTo(Duration.ofMillis(5));
		assertThat(bound.stepCostPerSeq()).isEqualTo(Duration.ofNanos(300_000));
		assertThat(bound.chunkedPrefill()).isFalse();
		assertThat(bound.numKvBlocks()).isEqualTo(1024);
		assertThat(bound.metricsDelay()).isEqualTo(Duration.ofSeconds(2));
		assertThat(bound.maxNumSeqs()).isEqualTo(64);
		assertThat(bound.maxNumQueuedReqs()).isEqualTo(16);
		assertThat(bound.prefixCaching()).isFalse();
		assertThat(bound.perRequestMetrics()).isTrue();
	}

	@Test
	void builderChangesOnlyWhatItIsTold() {
		SimulatorProperties changed = SimulatorProperties.defaults().toBuilder().numKvBlocks(600).build();
		assertThat(changed.numKvBlocks()).isEqualTo(600);
		assertThat(changed.toBuilder().numKvBlocks(4096).build()).isEqualTo(SimulatorProperties.defaults());
	}

	@Test
	void springRejectsValuesThatAreNotPositive() {
		new ApplicationContextRunner().withUserConfiguration(Bound.class)
			.withPropertyValues("tokengap.sim.max-num-seqs=0", "tokengap.sim.step-fixed-cost=0ms",
					"tokengap.sim.max-num-queued-reqs=-1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("max-num-seqs")
				.hasMessageContaining("step-fixed-cost")
				.hasMessageContaining("max-num-queued-reqs"));
	}

	@Test
	void springBindsAValidConfiguration() {
		new ApplicationContextRunner().withUserConfiguration(Bound.class)
			.withPropertyValues("tokengap.sim.model=my-model")
			.run((context) -> assertThat(context.getBean(SimulatorProperties.class).model()).isEqualTo("my-model"));
	}

	@Test
	void engineRefusesAKvCacheSmallerThanOneMaxLengthSequence() {
		SimulatorProperties tooSmall = SimulatorProperties.defaults().toBuilder().numKvBlocks(100).build();
		assertThatIllegalArgumentException().isThrownBy(tooSmall::requireUsable).withMessageContaining("max-model-len");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SimulatorProperties.defaults().toBuilder().blockSize(-1).build())
			.withMessageContaining("block-size");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(SimulatorProperties.class)
	static class Bound {

	}

}
