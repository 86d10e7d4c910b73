package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first tokens of a window, read from the newest entry back, against the whole ring
 * read entry by entry.
 */
class FirstTokenLogTests {

	@Test
	void countsTheFirstTokensOfTheWindowOnly() {
		FirstTokenLog log = new FirstTokenLog(16);
		log.record(100, 10);
		log.record(200, 20);
		log.record(300, 30);
		assertThat(log.between(100, 300)).containsExactly(2, 50);
		assertThat(log.between(99, 100)).containsExactly(1, 10);
		assertThat(log.between(300, 400)).containsExactly(0, 0);
	}

	@Test
	void findsARecordThatCameLateBehindNewerOnes() {
		FirstTokenLog log = new FirstTokenLog(16);
		log.record(1_000, 1);
		// A loop that timed its first token before another's but took the lock after it.
		log.record(5_000, 2);
		log.record(2_000, 4);
		log.record(6_000, 8);
		log.record(7_000, 16);
		// The walk back meets 7,000, 6,000, then 2,000: before the window, but the
		// entries before it may be as late as 2,000 + 3,000.
		assertThat(log.between(4_000, 5_000)).containsExactly(1, 2);
		assertThat(log.between(1_500, 2_000)).containsExactly(1, 4);
		assertThat(log.between(500, 1_000)).containsExactly(1, 1);
	}

	@Test
	void agreesWithTheWholeRingOnRandomLateRecords() {
		Random random = new Random(7);
		for (int run = 0; run < 200; run++) {
			int capacity = 1 + random.nextInt(64);
			FirstTokenLog log = new FirstTokenLog(capacity);
			List<long[]> kept = new ArrayList<>();
			long clock = 0;
			int records = random.nextInt(200);
			for (int i = 0; i < records; i++) {
				clock += random.nextInt(50);
				long late = (random.nextInt(8) == 0) ? random.nextInt(200) : 0;
				long arrival = Math.max(0, clock - late);
				long tokens = 1 + random.nextInt(1000);
				log.record(arrival, tokens);
				kept.add(new long[] { arrival, tokens });
				if (kept.size() > capacity) {
					kept.remove(0);
				}
			}
			for (int q = 0; q < 20; q++) {
				long from = random.nextInt((int) clock + 100) - 50;
				long to = from + random.nextInt(300);
				long count = 0;
				long tokens = 0;
				for (long[] entry : kept) {
					if (entry[0] > from && entry[0] <= to) {
						count++;
						tokens += entry[1];
					}
				}
				assertThat(log.between(from, to)).as("run %d, (%d, %d]", run, from, to).containsExactly(count, tokens);
			}
		}
	}

}
