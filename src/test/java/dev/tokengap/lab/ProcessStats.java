package dev.tokengap.lab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time (utime + stime) and peak RSS of the proxy's processes over the measured
 * window.
 */
final class ProcessStats {

	private static final double TICKS_PER_SECOND = 100;

	private final List<Integer> pids;

	private long ticksAtStart = -1;

	private long ticksAtEnd = -1;

	private long peakKib;

	ProcessStats(List<Integer> pids) {
		this.pids = pids;
	}

	void begin() {
		for (int pid : this.pids) {
			try {
				// Resets VmHWM, so the peak is the window's (proc(5): clear_refs "5").
				Files.writeString(Path.of("/proc/" + pid + "/clear_refs"), "5");
			}
			catch (IOException ex) {
				System.err.println("probe: cannot reset the peak RSS of " + pid + ": " + ex.getMessage());
			}
		}
		this.ticksAtStart = ticks();
	}

	void end() {
		this.ticksAtEnd = ticks();
		long kib = 0;
		for (int pid : this.pids) {
			kib += statusKib(pid, "VmHWM:");
		}
		this.peakKib = kib;
	}

	boolean measured() {
		return !this.pids.isEmpty() && this.ticksAtStart >= 0 && this.ticksAtEnd >= 0;
	}

	double cpuSeconds() {
		return (this.ticksAtEnd - this.ticksAtStart) / TICKS_PER_SECOND;
	}

	long peakRssKib() {
		return this.peakKib;
	}

	private long ticks() {
		long sum = 0;
		for (int pid : this.pids) {
			try {
				String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
				// Fields after the parenthesised command: state is field 3; utime 14,
				// stime 15.
				String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
				sum += Long.parseLong(f[11]) + Long.parseLong(f[12]);
			}
			catch (IOException ex) {
				throw new IllegalStateException("cannot read /proc/" + pid + "/stat", ex);
			}
		}
		return sum;
	}

	private static long statusKib(int pid, String field) {
		try {
			for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
				if (line.startsWith(field)) {
					return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
				}
			}
		}
		catch (IOException ex) {
			System.err.println("probe: cannot read /proc/" + pid + "/status: " + ex.getMessage());
		}
		return 0;
	}

}
