package dev.tokengap.metrics;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ModelLabelsTests {

	@Test
	void keepsServedAndConfiguredModels() {
		ModelLabels labels = new ModelLabels(List.of("configured"), 20);
		labels.served(List.of("served"));
		assertThat(labels.resolve("served")).isEqualTo("served");
		assertThat(labels.resolve("configured")).isEqualTo("configured");
	}

	@Test
	void labelsUnlistedModelsOtherAndAsksForARefresh() {
		ModelLabels labels = new ModelLabels(List.of(), 20);
		AtomicInteger refreshes = new AtomicInteger();
		labels.onUnlisted(refreshes::incrementAndGet);
		assertThat(labels.resolve("made-up")).isEqualTo("other");
		assertThat(refreshes).hasValue(1);
	}

	@Test
	void everyRequestsCopyOfANameResolvesToTheOneKept() {
		ModelLabels labels = new ModelLabels(List.of(), 20);
		labels.served(List.of("served"));
		String first = labels.resolve(new String("served"));
		assertThat(labels.resolve(new String("served"))).isSameAs(first);
	}

	@Test
	void labelsAMissingModelUnknown() {
		ModelLabels labels = new ModelLabels(List.of(), 20);
		assertThat(labels.resolve(null)).isEqualTo("unknown");
		assertThat(labels.resolve("")).isEqualTo("unknown");
	}

	@Test
	void capsDistinctValuesEvenAmongServedModels() {
		ModelLabels labels = new ModelLabels(List.of(), 3);
		List<String> served = java.util.stream.IntStream.range(0, 10_000).mapToObj((i) -> "m" + i).toList();
		labels.served(served);
		long distinct = served.stream().map(labels::resolve).distinct().count();
		assertThat(distinct).isEqualTo(4);
		assertThat(labels.resolve("m0")).isEqualTo("m0");
		assertThat(labels.resolve("m9999")).isEqualTo("other");
	}

}
