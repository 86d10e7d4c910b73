package dev.tokengap.backend;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class EngineRosterTests {

	private static final long SECOND = 1_000_000_000L;

	private static final EngineIdentity A = new EngineIdentity(1000.5, "0", "m");

	private static final EngineIdentity A_RESTARTED = new EngineIdentity(2000.25, "0", "m");

	/**
	 * Another pod of the same Deployment: same engine labels and model, its own start.
	 */
	private static final EngineIdentity B = new EngineIdentity(1500.75, "0", "m");

	private final EngineRoster roster = new EngineRoster("http://engine/metrics", 300 * SECOND);

	private long now;

	@Test
	void oneEngineIsMirroredAsItIs() {
		assertThat(admit(A, 5, 100).preemptions()).isEqualTo(5);
		assertThat(admit(A, 7, 150).preemptions()).isEqualTo(7);
		assertThat(admit(A, 7, 150).promptTokens()).isEqualTo(150);
		assertThat(this.roster.engines()).isEqualTo(1);
	}

	@Test
	void aRestartRebasesTheCountersWhichNeverGoBackwards() {
		admit(A, 10, 1000);
		EngineSample restarted = admit(A_RESTARTED, 2, 40);
		assertThat(restarted.preemptions()).isEqualTo(12);
		assertThat(restarted.promptTokens()).isEqualTo(1040);
		assertThat(admit(A_RESTARTED, 3, 50).preemptions()).isEqualTo(13);
		assertThat(this.roster.engines()).as("a restart is the same engine").isEqualTo(1);
	}

	@Test
	void aRestartWithoutAStartTimeIsSeenByTheDrop() {
		EngineIdentity unknown = new EngineIdentity(Double.NaN, "", "m");
		admit(unknown, 10, 1000);
		assertThat(admit(unknown, 1, 10).preemptions()).isEqualTo(11);
		assertThat(this.roster.engines()).isEqualTo(1);
	}

	@Test
	void anotherEngineBehindTheUrlIsAPoolAndNeverAddsItsTotal() {
		admit(A, 3, 300);
		EngineSample other = admit(B, 500, 90_000);
		assertThat(other.preemptions()).as("B's total is not news").isEqualTo(3);
		assertThat(this.roster.engines()).isEqualTo(2);
		assertThat(admit(A, 4, 310).preemptions()).isEqualTo(4);
		assertThat(admit(B, 502, 90_100).preemptions()).as("B's own rise only").isEqualTo(6);
		assertThat(admit(A, 4, 310).promptTokens()).isEqualTo(300 + 10 + 100);
		assertThat(this.roster.engines()).isEqualTo(2);
	}

	@Test
	void aPoolIsWarnedAboutOnceNamingTheSidecar(CapturedOutput output) {
		for (int i = 0; i < 5; i++) {
			admit(A, 3, 300);
			admit(B, 9, 900);
		}
		String logged = output.getOut() + output.getErr();
		assertThat(logged.split("More than one engine answers behind", -1)).hasSize(2);
		assertThat(logged).contains("sidecar", "one tokengap per engine", "'unknown'");
	}

	@Test
	void aYoungerBusierPodIsNoRestart() {
		admit(A, 3, 300);
		admit(A_RESTARTED, 50, 5000);
		assertThat(this.roster.engines()).as("newer start but counters did not drop").isEqualTo(2);
	}

	@Test
	void aYoungerIdlePodLooksLikeARestartUntilTheOlderOneAnswersAgain() {
		admit(A, 3, 300);
		assertThat(admit(A_RESTARTED, 0, 0).preemptions()).isEqualTo(3);
		assertThat(this.roster.engines()).isEqualTo(1);
		assertThat(admit(A, 5, 320).preemptions()).as("A is back: a pool, and its total is not news").isEqualTo(3);
		assertThat(this.roster.engines()).isEqualTo(2);
	}

	@Test
	void engineLabelsOrModelTellEnginesApartToo() {
		admit(A, 3, 300);
		admit(new EngineIdentity(A.startTime(), "0,1", "m"), 0, 0);
		admit(new EngineIdentity(A.startTime(), "0", "other"), 0, 0);
		assertThat(this.roster.engines()).isEqualTo(3);
	}

	@Test
	void enginesNotSeenWithinTheWindowAreForgotten() {
		admit(A, 3, 300);
		admit(B, 9, 900);
		this.now += 301 * SECOND;
		admit(B, 10, 910);
		assertThat(this.roster.engines()).isEqualTo(1);
	}

	@Test
	void theEnginesHistogramsAreMirroredAndRebasedLikeItsCounters() {
		this.roster.admit(histograms(1.5, 4, 8000, 20, 3), A);
		EngineSample same = this.roster.admit(histograms(2.0, 5, 9000, 22, 4), A);
		assertThat(new double[] { same.prefillSeconds(), same.prefillRequests(), same.prefillComputedTokens(),
				same.finishedRequests(), same.finishedRequestPreemptions() })
			.containsExactly(2.0, 5, 9000, 22, 4);
		EngineSample restarted = this.roster.admit(histograms(0.5, 1, 1000, 2, 1), A_RESTARTED);
		assertThat(new double[] { restarted.prefillSeconds(), restarted.prefillRequests(),
				restarted.prefillComputedTokens(), restarted.finishedRequests(),
				restarted.finishedRequestPreemptions() })
			.containsExactly(2.5, 6, 10000, 24, 5);
	}

	private EngineSample histograms(double prefillSeconds, double prefillRequests, double prefillTokens,
			double finished, double finishedPreemptions) {
		this.now += SECOND / 4;
		return new EngineSample(this.now, 1, 0, Double.NaN, 0.1, 0, 0, 0, 0, 0, prefillSeconds, prefillRequests,
				prefillTokens, finished, finishedPreemptions);
	}

	private EngineSample admit(EngineIdentity identity, double preemptions, double promptTokens) {
		this.now += SECOND / 4;
		return this.roster.admit(new EngineSample(this.now, 1, 0, Double.NaN, 0.1, preemptions, promptTokens, 0),
				identity);
	}

}
