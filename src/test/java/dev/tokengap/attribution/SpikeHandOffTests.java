package dev.tokengap.attribution;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.netty.channel.DefaultEventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The event loops' hand-off of spikes: taken on the hand-off's own thread, in order and
 * in batches; a full queue refuses at once and loses nothing it took.
 */
class SpikeHandOffTests {

	private final DefaultEventLoop loop = new DefaultEventLoop();

	private final List<String> scanned = new CopyOnWriteArrayList<>();

	private final List<Thread> threads = new CopyOnWriteArrayList<>();

	private final List<List<String>> batches = new CopyOnWriteArrayList<>();

	private final CountDownLatch release = new CountDownLatch(1);

	private SpikeHandOff handOff;

	@AfterEach
	void close() {
		this.release.countDown();
		if (this.handOff != null) {
			this.handOff.close();
		}
		this.loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
	}

	@Test
	void aSpikeOfferedOnAnEventLoopIsScannedOnTheHandOffsThreadNeverTheLoop() throws Exception {
		this.handOff = new SpikeHandOff(4, Duration.ZERO, this::record, (task) -> new Thread(task, "scan"));
		Thread loopThread = this.loop.submit(() -> {
			assertThat(this.handOff.offer(spike("one"), null)).isTrue();
			return Thread.currentThread();
		}).get(5, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.scanned.size() == 1);
		assertThat(this.threads).singleElement()
			.satisfies((thread) -> assertThat(thread).isNotSameAs(loopThread)
				.extracting(Thread::getName)
				.isEqualTo("scan"));
	}

	@Test
	void aFullHandOffRefusesAtOnceAndLosesNothingItTook() throws Exception {
		this.handOff = new SpikeHandOff(2, Duration.ZERO, (batch) -> {
			awaitRelease();
			record(batch);
		}, (task) -> new Thread(task, "scan"));
		assertThat(this.handOff.offer(spike("one"), null)).isTrue();
		// the scan thread has taken the first and waits: two more fill the queue
		await().atMost(Duration.ofSeconds(5)).until(() -> this.handOff.waiting() == 0);
		boolean[] offered = this.loop
			.submit(() -> new boolean[] { this.handOff.offer(spike("two"), null),
					this.handOff.offer(spike("three"), null), this.handOff.offer(spike("four"), null) })
			.get(5, TimeUnit.SECONDS);
		assertThat(offered).containsExactly(true, true, false);
		this.release.countDown();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.scanned.size() == 3);
		assertThat(this.scanned).containsExactly("one", "two", "three");
	}

	@Test
	void spikesThatComeWithinTheBatchWindowAreScannedTogetherInOrder() throws Exception {
		this.handOff = new SpikeHandOff(8, Duration.ofMillis(500), this::record, (task) -> new Thread(task, "scan"));
		this.loop
			.submit(() -> this.handOff.offer(spike("one"), null) && this.handOff.offer(spike("two"), null)
					&& this.handOff.offer(spike("three"), null))
			.get(5, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.scanned.size() == 3);
		assertThat(this.batches).containsExactly(List.of("one", "two", "three"));
		this.loop.submit(() -> this.handOff.offer(spike("four"), null)).get(5, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.scanned.size() == 4);
		assertThat(this.batches).containsExactly(List.of("one", "two", "three"), List.of("four"));
	}

	@Test
	void aBatchHoldsAtMostItsBoundAndTheRestFollowInTheNext() throws Exception {
		int offered = SpikeHandOff.MAX_BATCH + 10;
		this.handOff = new SpikeHandOff(offered, Duration.ofMillis(500), this::record,
				(task) -> new Thread(task, "scan"));
		this.loop.submit(() -> {
			for (int i = 0; i < offered; i++) {
				assertThat(this.handOff.offer(spike("s" + i), null)).isTrue();
			}
		}).get(5, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.scanned.size() == offered);
		assertThat(this.batches).extracting(List::size).containsExactly(SpikeHandOff.MAX_BATCH, 10);
		assertThat(this.scanned).first().isEqualTo("s0");
		assertThat(this.scanned).last().isEqualTo("s" + (offered - 1));
	}

	@Test
	void aClosedHandOffStopsItsThreadAndTakesNothingMore() {
		this.handOff = new SpikeHandOff(4, Duration.ZERO, this::record, (task) -> {
			Thread thread = new Thread(task, "scan");
			this.threads.add(thread);
			return thread;
		});
		this.handOff.close();
		assertThat(this.threads).singleElement().satisfies((thread) -> assertThat(thread.isAlive()).isFalse());
		assertThat(this.handOff.offer(spike("late"), null)).isFalse();
	}

	private void record(List<SpikeHandOff.Handed> batch) {
		this.threads.add(Thread.currentThread());
		this.batches.add(batch.stream().map((handed) -> handed.spike().requestId()).toList());
		for (SpikeHandOff.Handed handed : batch) {
			this.scanned.add(handed.spike().requestId());
		}
	}

	private void awaitRelease() {
		try {
			assertThat(this.release.await(10, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static Spike spike(String requestId) {
		EventTimes previous = new EventTimes(1_000_000_000L, 1_000_000_000L);
		EventTimes event = new EventTimes(1_600_000_000L, 1_600_000_000L);
		return new Spike(requestId, "m", "chat_completions", 0, 10, 100_000_000L, new GapWindow(previous, event, 0, 0),
				0, null);
	}

}
