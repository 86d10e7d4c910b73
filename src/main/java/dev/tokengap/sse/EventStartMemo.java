package dev.tokengap.sse;

import java.util.Arrays;

/**
 * What one stream's events start with, so that its scanner need not read the same bytes
 * again for every event. vLLM repeats most of each chunk: a chat chunk's id, object,
 * created time, model, choice index and delta key are the same in every event of a
 * stream, and only the token text and what follows it differ. The memo keeps the bytes
 * that the stream's recent events shared from their start (cut back to where a JSON token
 * begins, so that the next token's text does not shorten it again) and a scanner's state
 * after reading exactly those bytes from an event's start; an event whose bytes start
 * with them takes that state and is read on from there. The scanner is deterministic, so
 * this is the state reading the bytes would have left: nothing about the event is
 * guessed.
 * <p>
 * It learns from two events read in full, and shortens its prefix when an event does not
 * start with it; after {@value #MAX_BUILDS} prefixes a stream whose events have no stable
 * start is read in full from then on.
 */
final class EventStartMemo {

	/** The most bytes of an event start kept. */
	static final int MAX = 256;

	/** A shorter shared start is not worth restoring a state for. */
	static final int MIN = 32;

	/** Prefixes one stream may learn before its memo is given up. */
	static final int MAX_BUILDS = 8;

	/** The scanner whose state is the prefix's: never used for anything else. */
	private final SseEventScanner snapshot = SseEventScanner.withoutMemo();

	private final byte[] prefix = new byte[MAX];

	/** The prefix's length, or 0 while there is none. */
	private int length;

	/** The first bytes of the last event read in full while there was no prefix. */
	private byte[] last = new byte[MAX];

	/** Their length, or -1 when none was kept. */
	private int lastLength = -1;

	/** The first bytes of the event being read in full. */
	private byte[] current = new byte[MAX];

	private int currentLength;

	private boolean recording;

	private int builds;

	/**
	 * @return whether the scanner should still look for the prefix at event starts
	 */
	boolean active() {
		return this.builds <= MAX_BUILDS;
	}

	/**
	 * The prefix's length when the bytes from {@code from} start with all of it (then
	 * {@link #snapshot()} is the state after it), else 0.
	 */
	int match(byte[] bytes, int from, int to) {
		int n = this.length;
		return (n > 0 && to - from >= n && Arrays.equals(bytes, from, from + n, this.prefix, 0, n)) ? n : 0;
	}

	SseEventScanner snapshot() {
		return this.snapshot;
	}

	/** An event starts and will be read in full: its first bytes are kept. */
	void startRecording() {
		this.recording = true;
		this.currentLength = 0;
	}

	/** Bytes were fed some other way: what is kept would not be the event's. */
	void stopRecording() {
		this.recording = false;
	}

	boolean recording() {
		return this.recording;
	}

	/** The next bytes of the event being kept, up to {@link #MAX}. */
	void record(byte[] bytes, int from, int to) {
		int n = Math.min(to - from, MAX - this.currentLength);
		if (n > 0) {
			System.arraycopy(bytes, from, this.current, this.currentLength, n);
			this.currentLength += n;
		}
	}

	/**
	 * The event being kept was dispatched (the byte that did it is not kept): learns a
	 * prefix from it and the last one, or shortens the prefix it did not start with.
	 */
	void learn() {
		this.recording = false;
		byte[] event = this.current;
		int n = this.currentLength;
		int shared;
		if (this.length > 0) {
			shared = shared(this.prefix, this.length, event, n);
			if (shared == this.length) {
				// it did start with the prefix, split across reads
				return;
			}
		}
		else {
			shared = (this.lastLength >= 0) ? shared(this.last, this.lastLength, event, n) : 0;
		}
		int start = tokenStart(event, shared);
		if (start >= MIN && build(event, start)) {
			return;
		}
		this.length = 0;
		this.current = this.last;
		this.last = event;
		this.lastLength = n;
	}

	/** Forgets the stream's events. */
	void clear() {
		this.length = 0;
		this.lastLength = -1;
		this.recording = false;
		this.builds = 0;
	}

	/**
	 * Makes {@code event[0, n)} the prefix: the snapshot reads it from an event's start.
	 * @return false when the memo is given up instead
	 */
	private boolean build(byte[] event, int n) {
		if (++this.builds > MAX_BUILDS) {
			return false;
		}
		System.arraycopy(event, 0, this.prefix, 0, n);
		this.snapshot.startEvent();
		if (this.snapshot.scan(this.prefix, 0, n) != n || this.snapshot.completed() != null) {
			// bytes kept before an event's end cannot end one; never restore such a state
			this.builds = MAX_BUILDS + 1;
			return false;
		}
		this.length = n;
		return true;
	}

	/** How many leading bytes two event starts share. */
	private static int shared(byte[] a, int aLength, byte[] b, int bLength) {
		int mismatch = Arrays.mismatch(a, 0, aLength, b, 0, bLength);
		return (mismatch < 0) ? aLength : mismatch;
	}

	/**
	 * The end of the shared bytes cut back to where a JSON token or a line begins: after
	 * a quote, a colon, a comma, a bracket or a line end.
	 */
	private static int tokenStart(byte[] event, int shared) {
		for (int end = shared; end > 0; end--) {
			switch (event[end - 1]) {
				case '"', ':', ',', '{', '[', '\n' -> {
					return end;
				}
				default -> {
					// inside a token
				}
			}
		}
		return 0;
	}

}
