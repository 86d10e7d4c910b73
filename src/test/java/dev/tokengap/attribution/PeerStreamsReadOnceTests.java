package dev.tokengap.attribution;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import dev.tokengap.timing.StreamTimer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PeerStreams} reads each other stream's arrivals once for everything it says of a
 * gap; {@link PeerStreamsReference} asks each question in a loop of its own. On random
 * streams (steady, bursty, dense, silent for a while, ended, with rings that wrapped
 * inside a gap) and random batches of gaps, both say the same.
 */
class PeerStreamsReadOnceTests {

	private static final long MS = 1_000_000;

	@Test
	void saysWhatTheLoopPerQuestionSays() {
		Random random = new Random(11);
		// How often each answer was anything but empty: the comparison must see them all.
		int decoding = 0;
		int fed = 0;
		int waiting = 0;
		int quietPart = 0;
		for (int run = 0; run < 300; run++) {
			PeerStreams peers = new PeerStreams();
			List<StreamTimer> timers = new ArrayList<>();
			List<PeerStreams.Peer> live = new ArrayList<>();
			List<PeerStreams.Peer> ended = new ArrayList<>();
			int streams = 1 + random.nextInt(40);
			long horizon = 2_000;
			for (int s = 0; s < streams; s++) {
				StreamTimer timer = new StreamTimer(0, 1_000 * MS);
				String id = "r" + s;
				long prompt = random.nextInt(2_000);
				peers.started(timer, id, prompt);
				live.add(new PeerStreams.Peer(timer, id, prompt));
				long at = random.nextInt(1_500);
				long step = 1 + random.nextInt(random.nextBoolean() ? 20 : 300);
				int events = random.nextInt(random.nextInt(8) == 0 ? 400 : 60);
				if (random.nextInt(6) == 0) {
					// Dense: more events inside one gap than the ring keeps.
					step = 1 + random.nextInt(4);
					events = 2 * StreamTimer.RECENT_ARRIVALS + random.nextInt(200);
				}
				for (int e = 0; e < events && at < horizon; e++) {
					timer.onContent(0, at * MS, at * MS + 1);
					// Now and then a silence, as a preempted sequence has.
					at += (random.nextInt(12) == 0) ? 200 + random.nextInt(800) : 1 + random.nextInt((int) step);
				}
				timers.add(timer);
			}
			for (int s = 0; s < timers.size(); s++) {
				if (random.nextInt(4) == 0) {
					peers.ended(timers.get(s));
					PeerStreams.Peer peer = live.get(s - ended.size());
					live.remove(peer);
					ended.add(peer);
				}
			}
			for (int batch = 0; batch < 5; batch++) {
				int k = 1 + random.nextInt(12);
				List<PeerStreams.Gap> gaps = new ArrayList<>();
				for (int g = 0; g < k; g++) {
					StreamTimer self = timers.get(random.nextInt(timers.size()));
					long from = random.nextInt((int) horizon) * MS;
					long to = from + (1 + random.nextInt(900)) * MS;
					gaps.add(new PeerStreams.Gap(self, from, to));
				}
				List<PeerView> views = peers.during(gaps);
				List<PeerView> expected = PeerStreamsReference.during(gaps, live, ended);
				for (int g = 0; g < k; g++) {
					PeerView view = views.get(g);
					PeerView want = expected.get(g);
					String where = "run " + run + ", batch " + batch + ", gap " + g;
					assertThat(view.decoding()).as(where).isEqualTo(want.decoding());
					assertThat(view.fed()).as(where).isEqualTo(want.fed());
					assertThat(view.quietNanos()).as(where).isEqualTo(want.quietNanos());
					assertThat(view.self()).as(where).isSameAs(want.self());
					assertThat(view.waiting()).as(where).isEqualTo(want.waiting());
					decoding += (want.decoding() > 0) ? 1 : 0;
					fed += (want.fed() > 0) ? 1 : 0;
					waiting += want.waiting().isEmpty() ? 0 : 1;
					PeerStreams.Gap gap = gaps.get(g);
					quietPart += (want.quietNanos() < gap.toNanos() - gap.fromNanos()) ? 1 : 0;
				}
			}
		}
		assertThat(decoding).isGreaterThan(5_000);
		assertThat(fed).isGreaterThan(3_000);
		assertThat(waiting).isGreaterThan(2_000);
		assertThat(quietPart).isGreaterThan(5_000);
	}

}
