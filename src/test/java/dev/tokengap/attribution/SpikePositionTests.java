package dev.tokengap.attribution;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A spike's position: the first, middle or last third of its stream's content events.
 */
class SpikePositionTests {

	@ParameterizedTest(name = "event {0} of {1}: {2}")
	@CsvSource(textBlock = """
			0, 1, head
			1, 3, middle
			2, 3, tail
			3, 9, middle
			2, 9, head
			5, 9, middle
			6, 9, tail
			8, 9, tail
			3, 10, head
			4, 10, middle
			6, 10, middle
			7, 10, tail
			1, 2, middle
			33, 100, head
			34, 100, middle
			66, 100, middle
			67, 100, tail
			""")
	void placesAnEventInItsThird(int index, int events, String position) {
		assertThat(SpikePosition.of(index, events).label()).isEqualTo(position);
	}

	@Test
	void refusesAnEventOutsideTheStream() {
		assertThatIllegalArgumentException().isThrownBy(() -> SpikePosition.of(3, 3));
		assertThatIllegalArgumentException().isThrownBy(() -> SpikePosition.of(-1, 3));
	}

}
