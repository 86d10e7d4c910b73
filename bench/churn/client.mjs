// The churn benchmark's load client: Node's `net` module with a hand-written HTTP/1.1
// client (keep-alive pool, chunked decoding, SSE scanning), so that neither end of the benchmark is
// tokengap's own code. Pairs with bench/churn/backend.mjs, whose content events carry
// "tg_sent_ns":"<CLOCK_MONOTONIC ns>" stamped right before their socket write.
//
//   node bench/churn/client.mjs --url http://127.0.0.1:27600 --target direct --mode fixed \
//     --concurrency 200 --tokens 100 [--warmup-s 3] [--measure-s 20] [--out churn.jsonl] [--pids 1,2]
//
// Modes:
//   fixed --concurrency C --tokens N      closed loop: C streams always in flight, each asking for N
//                                         tokens; a stream that ends is followed at once by a new
//                                         one (on the connection it freed). The first C start
//                                         spread over 1 s and ask for a uniform 1..N tokens (the
//                                         closed loop's steady state), so ends are spread out.
//   mix --rate R --min-tokens A --max-tokens B [--seed S]  (rate 35, 64..512 by default)
//                                         open loop: Poisson arrivals at R streams/s, max_tokens
//                                         uniform in [A, B] (seeded PRNG). At t = 0 the steady
//                                         state's R x E[duration] streams start over 1 s, with the
//                                         residual lengths of streams already in progress.
//   rate --rate R                         open loop: R non-streaming requests/s ("stream": false,
//                                         max_tokens 16), EVENLY spaced; latency from each
//                                         request's intended send time (no coordinated omission)
//                                         to its response's last byte.
// New requests reuse the most recently idle keep-alive connection and open one only when none is
// idle, up to --max-conns (rate: 512, streaming: 4096); a request that finds none is "unsent"
// (failed).
//
// Measurement: --warmup-s not measured, then --measure-s measured, then no new requests while
// those in flight finish (at most --drain-s, default 1.2 x the longest stream's duration + 5 s;
// then they are aborted and counted failed). A content event is measured when its stamp falls in the window;
// its one-way delay = hrtime taken once per socket read (in the 'data' handler, before parsing)
// minus its stamp. An event is coalesced when the same read completed another content event of
// its stream that the backend sent at least half an interval earlier (events it sent together
// are counted apart, as sent together), unless the client's own event loop was blocked for that
// long within 100 ms of the read: a client that stalls finds two events waiting whatever the
// proxy did (counted apart too, as client-stalled; on a shared machine the proxy's own CPU use
// can be what stalled the client). First-event latency: from the request's write (after the connect, if it opened a
// connection) to the read that completed its first content event. A stream fails unless it gets
// 200, exactly max_tokens content events, [DONE] and the chunked terminator, with no socket error
// or close. Requests counted: every request in flight at some point of the window (first-event
// and rate latencies: those sent in the window).
// --pids: the target's processes; their utime+stime over the window and the sum of their VmHWM
// (reset at the window's start), and the same CPU by thread group (THREAD_GROUPS: a proxy's event
// loops apart from tokengap's other threads, the JIT and the GC, which a round's total mixes).
// --backend-pids likewise (CPU only). One JSON line per run is
// appended to --out, labelled --scenario (default fixed-N, mix-A-B, rate-R, with -cC / -rR / -iI
// when the concurrency / mix rate / streaming interval is not 200 / 35 / 20); a one-line summary
// goes to stderr. The line also holds the client's own CPU and event-loop delay p99: a client
// that lags inflates every row.
// --interval-ms (default 20): the gap between a stream's events. Each request asks the backend for
// it ("tg_interval_ms"), so that one backend serves scenarios of different cadences; it also bounds
// the drain and says which pairs of events were sent apart.
import net from 'node:net';
import fs from 'node:fs';
import { execSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';

// ---- options --------------------------------------------------------------------------------
const o = {};
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i];
  if (!k.startsWith('--')) throw new Error('unexpected argument ' + k);
  o[k.slice(2)] = process.argv[i + 1] ?? '';
}
const url = new URL(o.url ?? 'http://127.0.0.1:27600');
const HOST = url.hostname;
const PORT = Number(url.port || 80);
const MODE = o.mode ?? 'fixed';
const TARGET = o.target ?? 'direct';
const WARMUP_S = Number(o['warmup-s'] ?? 3);
const MEASURE_S = Number(o['measure-s'] ?? 20);
const INTERVAL_MS = Number(o['interval-ms'] ?? 20);
if (!(INTERVAL_MS > 0 && INTERVAL_MS <= 60000)) throw new Error('--interval-ms must be in (0, 60000]');
// Two events of a stream the backend sent at least this far apart are its separate writes.
const APART_NS = INTERVAL_MS * 1e6 / 2;
const CONCURRENCY = Number(o.concurrency ?? 200);
const TOKENS = Number(o.tokens ?? 100);
const RATE = Number(o.rate ?? (MODE === 'rate' ? 500 : 35));
const MIN_TOKENS = Number(o['min-tokens'] ?? 64);
const MAX_TOKENS = Number(o['max-tokens'] ?? 512);
const SEED = Number(o.seed ?? 13);
const MAX_CONNS = Number(o['max-conns'] ?? (MODE === 'rate' ? 512 : 4096));
const PIDS = (o.pids ?? '').split(',').filter((s) => s.trim() !== '').map(Number);
const BACKEND_PIDS = (o['backend-pids'] ?? '').split(',').filter((s) => s.trim() !== '').map(Number);
const ROUND = Number(o.round ?? 0);
const SESSION = o.session ?? '';
const OUT = o.out ?? '';
if (!['fixed', 'mix', 'rate'].includes(MODE)) throw new Error('--mode must be fixed, mix or rate');
const STREAMING = MODE !== 'rate';
const SCENARIO = o.scenario ?? ((MODE === 'fixed' ? `fixed-${TOKENS}${CONCURRENCY === 200 ? '' : `-c${CONCURRENCY}`}`
  : MODE === 'mix' ? `mix-${MIN_TOKENS}-${MAX_TOKENS}${RATE === 35 ? '' : `-r${RATE}`}` : `rate-${RATE}`)
  + (MODE === 'rate' || INTERVAL_MS === 20 ? '' : `-i${INTERVAL_MS}`));
const LONGEST_MS = MODE === 'fixed' ? TOKENS * INTERVAL_MS : MODE === 'mix' ? MAX_TOKENS * INTERVAL_MS : 0;
const DRAIN_S = Number(o['drain-s'] ?? (LONGEST_MS / 1000 * 1.2 + 5));

// ---- clock: ns since BASE as doubles (exact for 104 days) -----------------------------------
const BASE = process.hrtime.bigint();
// The wall clock at BASE, to line coalesced events up with a proxy's GC or safepoint log.
const BASE_EPOCH_MS = Date.now();
const BASE_HI = Number(BASE / 1000000000000n);
const BASE_LO = Number(BASE % 1000000000000n);
const nowNs = () => Number(process.hrtime.bigint() - BASE);
const nowMs = () => nowNs() / 1e6;
const WINDOW_START = WARMUP_S * 1e9;
const WINDOW_END = (WARMUP_S + MEASURE_S) * 1e9;

// ---- a seeded PRNG (mulberry32) -------------------------------------------------------------
let seedState = SEED >>> 0;
function random() {
  seedState = (seedState + 0x6D2B79F5) >>> 0;
  let t = seedState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// ---- growable sample arrays (µs) ------------------------------------------------------------
class Samples {
  constructor(n) { this.a = new Float64Array(n); this.n = 0; }
  push(v) {
    if (this.n === this.a.length) { const b = new Float64Array(this.a.length * 2); b.set(this.a); this.a = b; }
    this.a[this.n++] = v;
  }
  sorted() { return this.a.subarray(0, this.n).sort(); }
}
function pct(sorted, q) { // nearest rank
  if (sorted.length === 0) return null;
  return round1(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]);
}
const round1 = (x) => Math.round(x * 10) / 10;

// ---- request bodies, as a real OpenAI client sends them -------------------------------------
const PROMPT = 'You are benchmarking a reverse proxy. Summarise, in plain words and without lists, '
  + 'why the time between two streamed tokens matters to a person reading a chat answer as it is '
  + 'being written, and what a proxy in the path can do to it.';
const PROMPT_JSON = JSON.stringify(PROMPT);
const requestTexts = new Map();
function streamRequest(maxTokens) {
  let text = requestTexts.get(maxTokens);
  if (text === undefined) requestTexts.set(maxTokens, text = requestText(maxTokens, true));
  return text;
}
function requestText(maxTokens, stream) {
  const body = '{"model":"bench-model","messages":[{"role":"user","content":' + PROMPT_JSON
    + '}],"max_tokens":' + maxTokens + ',"tg_interval_ms":' + INTERVAL_MS
    + (stream ? ',"stream":true,"stream_options":{"include_usage":true}}'
      : ',"stream":false}');
  return 'POST /v1/chat/completions HTTP/1.1\r\nhost: ' + url.host + '\r\naccept-encoding: gzip, deflate\r\n'
    + 'connection: keep-alive\r\naccept: application/json\r\ncontent-type: application/json\r\n'
    + 'user-agent: OpenAI/Python 1.54.0\r\nx-stainless-lang: python\r\nx-stainless-package-version: 1.54.0\r\n'
    + 'x-stainless-retry-count: 0\r\nauthorization: Bearer x\r\ncontent-length: ' + Buffer.byteLength(body)
    + '\r\n\r\n' + body;
}
const RATE_REQUEST = requestText(16, false);

// ---- results --------------------------------------------------------------------------------
const delays = new Samples(1 << 18); // one-way delay of measured content events, µs
const firsts = new Samples(1 << 12); // first content event after the request's write, µs
const latencies = new Samples(1 << 16); // rate mode: intended send -> last byte, µs
const fromSend = new Samples(1 << 16); // rate mode: actual write -> last byte, µs
const c = {
  started: 0, startedInWindow: 0, completed: 0, failed: 0, aborted: 0, unsent: 0, measuredEvents: 0,
  receivedEvents: 0, coalesced: 0, sentTogether: 0, clientStalledCoalesced: 0, coalescedByWindow: new Map(), completionsInWindow: 0, connectionsOpened: 0, warmupFailed: 0,
};
const failures = {}; // reason -> count (measured requests)
let phase = 'warmup'; // warmup | window | drain | done
let issuing = true;
let inFlight = 0;
let maxInFlight = 0;
const inFlightSamples = [];

const MARKER = Buffer.from('"tg_sent_ns":"');
const DONE = Buffer.from('data: [DONE]');
const CRLF2 = Buffer.from('\r\n\r\n');

class Request {
  constructor(maxTokens, intendedNs) {
    this.maxTokens = maxTokens;
    this.intendedNs = intendedNs;
    this.sentNs = -1;
    this.events = 0;
    this.done = false;
    this.firstSeen = false;
    this.lastRead = -1;
    this.lastSent = -1;
    this.lastCounted = false;
    this.status = 0;
    this.sentInWindow = intendedNs >= WINDOW_START && intendedNs < WINDOW_END;
    this.finished = false;
    this.onEnd = null;
  }
}

// ---- connections: hand-written HTTP/1.1 client ----------------------------------------------
const S_IDLE = 0, S_HEAD = 1, S_CHUNK_SIZE = 2, S_CHUNK_DATA = 3, S_CHUNK_CRLF = 4, S_TRAILER = 5,
  S_BODY = 6, S_BODY_EOF = 7;
const idle = []; // LIFO
const all = new Set();

class Conn {
  constructor() {
    this.req = null;
    this.state = S_IDLE;
    this.connected = false;
    this.dead = false;
    this.reads = 0;
    this.head = null;
    this.line = '';
    this.remaining = 0;
    this.carry = null;
    this.keepAlive = true;
    this.socket = net.connect({ host: HOST, port: PORT, noDelay: true });
    c.connectionsOpened++;
    all.add(this);
    this.socket.on('connect', () => {
      this.connected = true;
      if (this.req) this.write();
    });
    this.socket.on('data', (d) => this.onData(d));
    this.socket.on('error', (e) => { this.error = e.code || e.message; });
    this.socket.on('close', () => this.onClose());
  }

  send(req) {
    this.req = req;
    this.state = S_HEAD;
    this.head = null;
    this.carry = null;
    if (this.connected) this.write();
  }

  write() {
    const req = this.req;
    req.sentNs = nowNs();
    this.socket.write(STREAMING ? streamRequest(req.maxTokens) : RATE_REQUEST);
  }

  onClose() {
    this.dead = true;
    all.delete(this);
    const i = idle.indexOf(this);
    if (i >= 0) idle.splice(i, 1);
    if (this.req) {
      if (this.state === S_BODY_EOF) this.complete(nowNs());
      else finish(this, this.req, false, this.error ? 'error' : 'closed');
    }
  }

  onData(buf) {
    const t = nowNs(); // once per read, before parsing
    const req = this.req;
    if (!req) { this.socket.destroy(); return; } // bytes nobody asked for
    const read = ++this.reads;
    let p = 0;
    const n = buf.length;
    while (p < n && this.req === req) {
      switch (this.state) {
        case S_HEAD: {
          let b = this.head ? Buffer.concat([this.head, buf.subarray(p)]) : buf.subarray(p);
          const e = b.indexOf(CRLF2);
          if (e < 0) { this.head = Buffer.from(b); return; }
          const consumed = e + 4 - (this.head ? this.head.length : 0);
          this.head = null;
          this.parseHead(b.toString('latin1', 0, e));
          p += consumed;
          if (this.state === S_IDLE) return; // completed (no body)
          break;
        }
        case S_CHUNK_SIZE:
        case S_TRAILER: {
          const e = buf.indexOf(10, p); // '\n'
          if (e < 0) { this.line += buf.toString('latin1', p); return; }
          const line = (this.line + buf.toString('latin1', p, e)).replace(/\r$/, '');
          this.line = '';
          p = e + 1;
          if (this.state === S_TRAILER) {
            if (line === '') { this.complete(t); return; }
            break;
          }
          const size = parseInt(line, 16);
          if (!(size >= 0)) { this.protocolError('bad chunk size'); return; }
          if (size === 0) this.state = S_TRAILER;
          else { this.remaining = size; this.state = S_CHUNK_DATA; }
          break;
        }
        case S_CHUNK_DATA: {
          const m = Math.min(this.remaining, n - p);
          this.body(buf, p, p + m, t, read);
          p += m;
          this.remaining -= m;
          if (this.remaining === 0) { this.state = S_CHUNK_CRLF; this.remaining = 2; }
          break;
        }
        case S_CHUNK_CRLF: {
          const m = Math.min(this.remaining, n - p);
          p += m;
          this.remaining -= m;
          if (this.remaining === 0) this.state = S_CHUNK_SIZE;
          break;
        }
        case S_BODY: {
          const m = Math.min(this.remaining, n - p);
          if (STREAMING) this.body(buf, p, p + m, t, read);
          p += m;
          this.remaining -= m;
          if (this.remaining === 0) { this.complete(t); return; }
          break;
        }
        case S_BODY_EOF:
          if (STREAMING) this.body(buf, p, n, t, read);
          p = n;
          break;
        default:
          this.protocolError('unexpected bytes');
          return;
      }
    }
  }

  parseHead(head) {
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    this.req.status = m ? Number(m[1]) : -1;
    let length = -1;
    let chunked = false;
    let keepAlive = lines[0].startsWith('HTTP/1.1');
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(':');
      if (colon <= 0) continue;
      const name = lines[i].slice(0, colon).trim().toLowerCase();
      const value = lines[i].slice(colon + 1).trim().toLowerCase();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.includes('chunked');
      else if (name === 'connection') {
        if (value.includes('close')) keepAlive = false;
        else if (value.includes('keep-alive')) keepAlive = true;
      }
    }
    this.keepAlive = keepAlive;
    if (chunked) this.state = S_CHUNK_SIZE;
    else if (length > 0) { this.state = S_BODY; this.remaining = length; }
    else if (length === 0 || this.req.status === 204 || this.req.status === 304) this.complete(nowNs());
    else { this.state = S_BODY_EOF; this.keepAlive = false; }
  }

  // Decoded body bytes [s, e) of buf: SSE events end with a blank line.
  body(buf, s, e, t, read) {
    if (!STREAMING || s === e) return;
    let data = buf;
    let p = s;
    let end = e;
    if (this.carry) {
      data = Buffer.concat([this.carry, buf.subarray(s, e)]);
      p = 0;
      end = data.length;
      this.carry = null;
    }
    for (;;) {
      let q = data.indexOf(10, p); // find "\n\n" from p, bounded by end
      while (q >= 0 && q < end - 1 && data[q + 1] !== 10) q = data.indexOf(10, q + 1);
      if (q < 0 || q >= end - 1) break;
      this.event(data, p, q, t, read);
      p = q + 2;
    }
    if (p < end) this.carry = Buffer.from(data.subarray(p, end));
  }

  // One SSE event, bytes [s, e) without its blank line.
  event(data, s, e, t, read) {
    const req = this.req;
    let ds = -1;
    // Fast path: the stamp is the event's last field, "tg_sent_ns":"<digits>"}
    if (data[e - 1] === 125 && data[e - 2] === 34) {
      let k = e - 3;
      while (k > s && data[k] >= 48 && data[k] <= 57) k--;
      if (data[k] === 34 && k - s >= MARKER.length
        && data.compare(MARKER, 0, MARKER.length, k + 1 - MARKER.length, k + 1) === 0) ds = k + 1;
    }
    if (ds < 0) {
      const m = data.subarray(s, e).indexOf(MARKER);
      if (m >= 0) ds = s + m + MARKER.length;
    }
    if (ds < 0) {
      if (e - s >= DONE.length && data.compare(DONE, 0, DONE.length, s, s + DONE.length) === 0) req.done = true;
      return;
    }
    let de = ds;
    while (de < e && data[de] >= 48 && data[de] <= 57) de++;
    const split = Math.max(ds, de - 12);
    let hi = 0;
    for (let i = ds; i < split; i++) hi = hi * 10 + (data[i] - 48);
    let lo = 0;
    for (let i = split; i < de; i++) lo = lo * 10 + (data[i] - 48);
    const sent = (hi - BASE_HI) * 1e12 + (lo - BASE_LO);
    req.events++;
    c.receivedEvents++;
    const inWindow = sent >= WINDOW_START && sent < WINDOW_END;
    if (req.lastRead === read) {
      if (inWindow) {
        const n = req.lastCounted ? 1 : 2;
        if (sent - req.lastSent >= APART_NS) {
          // Judged at the end: the client's own stall around this read may explain it.
          const w = Math.floor(t / STALL_WINDOW_NS);
          c.coalescedByWindow.set(w, (c.coalescedByWindow.get(w) || 0) + n);
        } else {
          c.sentTogether += n;
        }
      }
      req.lastCounted = true;
    } else {
      req.lastCounted = false;
    }
    req.lastRead = read;
    req.lastSent = sent;
    if (inWindow) {
      c.measuredEvents++;
      delays.push((t - sent) / 1e3);
    }
    if (!req.firstSeen) {
      req.firstSeen = true;
      if (req.sentInWindow) firsts.push((t - req.sentNs) / 1e3);
    }
  }

  complete(t) {
    const req = this.req;
    this.state = S_IDLE;
    let ok = req.status === 200;
    let why = ok ? null : 'status';
    if (ok && STREAMING) {
      if (this.carry) this.body(Buffer.from('\n\n'), 0, 2, t, this.reads); // an unterminated last event
      if (req.events !== req.maxTokens) { ok = false; why = 'short'; }
      else if (!req.done) { ok = false; why = 'no_done'; }
    }
    if (!STREAMING && req.sentInWindow && ok) {
      latencies.push((t - req.intendedNs) / 1e3);
      fromSend.push((t - req.sentNs) / 1e3);
    }
    if (ok && t >= WINDOW_START && t < WINDOW_END) c.completionsInWindow++;
    this.req = null;
    if (this.keepAlive && !this.dead) idle.push(this);
    else this.socket.destroy();
    finish(this, req, ok, why);
  }

  protocolError(why) {
    const req = this.req;
    this.req = null;
    this.socket.destroy();
    if (req) finish(this, req, false, why);
  }
}

// A request is measured when it was in flight at some point of the window: sent in it, or sent
// before it and ended after its start.
function finish(conn, req, ok, why) {
  if (req.finished) return;
  req.finished = true;
  if (conn.req === req) conn.req = null;
  inFlight--;
  if (req.sentInWindow || (req.intendedNs < WINDOW_START && nowNs() >= WINDOW_START)) {
    if (ok) c.completed++;
    else { c.failed++; failures[why] = (failures[why] || 0) + 1; }
  } else if (!ok && phase === 'warmup') {
    c.warmupFailed++;
  }
  if (req.onEnd) req.onEnd(ok);
}

// Starts a request now (intendedNs: when it was meant to start). false if no connection was free.
function start(maxTokens, intendedNs, onEnd) {
  const req = new Request(maxTokens, intendedNs);
  req.onEnd = onEnd;
  let conn = idle.pop();
  if (!conn) {
    if (all.size >= MAX_CONNS) {
      if (req.sentInWindow) { c.unsent++; c.failed++; failures.unsent = (failures.unsent || 0) + 1; }
      return false;
    }
    conn = new Conn();
  }
  c.started++;
  if (req.sentInWindow) c.startedInWindow++;
  inFlight++;
  if (inFlight > maxInFlight && phase === 'window') maxInFlight = inFlight;
  conn.send(req);
  return true;
}

// ---- the load -------------------------------------------------------------------------------
function fixedLoop() {
  const again = (ok) => {
    if (!issuing) return;
    if (ok) start(TOKENS, nowNs(), again);
    else setTimeout(() => issuing && start(TOKENS, nowNs(), again), 10); // no hot loop on a dead target
  };
  for (let i = 0; i < CONCURRENCY; i++) {
    const tokens = 1 + Math.floor(random() * TOKENS); // residual lengths of a running closed loop
    setTimeout(() => { if (issuing) start(tokens, nowNs(), again); }, (i * 1000) / CONCURRENCY);
  }
}

// Open loop: every request due by now is started (late ones too, with their intended time).
// No request is meant for after the window; the window's end flushes any still due.
let flushOpenLoop = () => {};
function openLoop(gapMs, tokensOf) {
  let next = nowMs();
  const due = () => {
    const now = nowMs();
    while (next <= now && next * 1e6 < WINDOW_END) {
      start(tokensOf(), next * 1e6, null);
      next += gapMs();
    }
  };
  const pump = () => {
    if (!issuing) return;
    due();
    if (next * 1e6 < WINDOW_END) setTimeout(pump, Math.max(0, next - nowMs()));
  };
  flushOpenLoop = due;
  pump();
}

function mixLoop() {
  const a = MIN_TOKENS, b = MAX_TOKENS;
  const tokens = () => a + Math.floor(random() * (b - a + 1));
  // Prefill with the open loop's steady state: R x E[S] streams in progress, each a length-biased
  // length (density ~ s on [a, b]) of which a uniform part remains.
  const prefill = Math.round(RATE * ((a + b) / 2) * INTERVAL_MS / 1000);
  for (let i = 0; i < prefill; i++) {
    const s = Math.sqrt(a * a + random() * (b * b - a * a));
    const left = Math.max(1, Math.ceil(random() * s));
    setTimeout(() => { if (issuing) start(left, nowNs(), null); }, (i * 1000) / prefill);
  }
  openLoop(() => -Math.log(1 - random()) * 1000 / RATE, tokens);
}

// ---- process statistics ---------------------------------------------------------------------
let CLK_TCK = 100;
try { CLK_TCK = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100; } catch { /* 100 */ }
function ticks(pids) {
  let sum = 0;
  for (const pid of pids) {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    sum += Number(f[11]) + Number(f[12]); // fields 14 and 15: utime, stime
  }
  return sum;
}
// The target's threads by name (/proc's comm, at most 15 characters); the first match wins.
const THREAD_GROUPS = [
  ['loops', /^(tokengap-epoll|relay-epoll|multiThreadIoEv|nginx)/],
  ['tokengap_other', /^tokengap-/],
  ['jit', /^C[12] CompilerThre/],
  ['gc_vm', /^(GC Thread|G1 |VM Thread)/],
];
function ticksByGroup(pids) {
  const sums = Object.fromEntries([...THREAD_GROUPS.map(([g]) => [g, 0]), ['other', 0]]);
  for (const pid of pids) {
    let tids = [];
    try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tids) {
      let name, stat;
      try {
        name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'latin1').trim();
        stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      } catch { continue; } // the thread ended while we looked
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const group = (THREAD_GROUPS.find(([, re]) => re.test(name)) || ['other'])[0];
      sums[group] += Number(f[11]) + Number(f[12]);
    }
  }
  return sums;
}
function hwmKib(pids) {
  let sum = 0;
  for (const pid of pids) {
    const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
    if (m) sum += Number(m[1]);
  }
  return sum;
}
const loadavg = () => Number(fs.readFileSync('/proc/loadavg', 'latin1').split(' ')[0]);

const win = {};
const loop = monitorEventLoopDelay({ resolution: 10 });
// The client's own stalls: a read after the client's loop was blocked for longer than two
// events' spacing finds both in the socket, whatever the proxy did. The 100 ms windows in
// which the loop was seen blocked for at least APART_NS.
const STALL_WINDOW_NS = 1e8;
const stallMonitor = monitorEventLoopDelay({ resolution: 5 });
const stalls = new Set();
let stallTimer = null;
function noteStall() {
  if (stallMonitor.max >= APART_NS) stalls.add(Math.floor(nowNs() / STALL_WINDOW_NS));
  stallMonitor.reset();
}
// Coalesced events whose read came within a window of a client stall are the client's.
function judgeCoalesced() {
  const bySecond = new Map();
  for (const [w, n] of c.coalescedByWindow) {
    if (stalls.has(w) || stalls.has(w - 1) || stalls.has(w + 1)) {
      c.clientStalledCoalesced += n;
      continue;
    }
    c.coalesced += n;
    const second = Math.floor(BASE_EPOCH_MS / 1000 + w * STALL_WINDOW_NS / 1e9);
    bySecond.set(second, (bySecond.get(second) || 0) + n);
  }
  return Object.fromEntries([...bySecond].sort((a, b) => a[0] - b[0]));
}

function windowStart() {
  phase = 'window';
  maxInFlight = inFlight;
  for (const pid of PIDS) {
    try { fs.writeFileSync(`/proc/${pid}/clear_refs`, '5'); } catch { /* peak of the process's life */ }
  }
  win.ticks0 = ticks(PIDS);
  win.groups0 = ticksByGroup(PIDS);
  win.backend0 = ticks(BACKEND_PIDS);
  win.cpu0 = process.cpuUsage();
  win.load0 = loadavg();
  loop.enable();
  stallMonitor.enable();
  stallTimer = setInterval(noteStall, STALL_WINDOW_NS / 1e6);
  win.sampler = setInterval(() => inFlightSamples.push(inFlight), 100);
}

function windowEnd() {
  flushOpenLoop();
  phase = 'drain';
  issuing = false;
  win.ticks1 = ticks(PIDS);
  win.groups1 = ticksByGroup(PIDS);
  win.backend1 = ticks(BACKEND_PIDS);
  win.cpu1 = process.cpuUsage(win.cpu0);
  win.load1 = loadavg();
  win.hwm = hwmKib(PIDS);
  loop.disable();
  noteStall();
  clearInterval(stallTimer);
  stallMonitor.disable();
  clearInterval(win.sampler);
  const deadline = Date.now() + DRAIN_S * 1000;
  const wait = () => {
    if (inFlight === 0 || Date.now() >= deadline) report();
    else setTimeout(wait, 50);
  };
  wait();
}

function report() {
  phase = 'done';
  for (const conn of [...all]) {
    if (conn.req) {
      const req = conn.req;
      conn.req = null;
      c.aborted++; // ends after the window's start: measured
      finish(conn, req, false, 'aborted');
    }
    conn.socket.destroy();
  }
  const d = delays.sorted();
  const f = firsts.sorted();
  const l = latencies.sorted();
  const ls = fromSend.sorted();
  const main = STREAMING ? d : l;
  const cpu = PIDS.length ? (win.ticks1 - win.ticks0) / CLK_TCK : null;
  const measuredRequests = c.completed + c.failed;
  const coalescedByEpochS = judgeCoalesced();
  const r = {
    session: SESSION, round: ROUND, target: TARGET, scenario: SCENARIO, mode: MODE,
    concurrency: MODE === 'fixed' ? CONCURRENCY : null, tokens: MODE === 'fixed' ? TOKENS : null,
    rate: MODE === 'fixed' ? null : RATE, min_tokens: MODE === 'mix' ? MIN_TOKENS : null,
    max_tokens: MODE === 'mix' ? MAX_TOKENS : null, warmup_s: WARMUP_S, measure_s: MEASURE_S,
    requests_started: c.startedInWindow, requests_measured: measuredRequests,
    requests_completed: c.completed, requests_failed: c.failed, requests_aborted: c.aborted,
    requests_unsent: c.unsent, failures, warmup_failed: c.warmupFailed,
    measured_events: c.measuredEvents, received_events: c.receivedEvents, coalesced_events: c.coalesced,
    coalesced_fraction: c.measuredEvents ? c.coalesced / c.measuredEvents : null,
    // Coalesced reads the client's own loop stalls explain, and pairs the backend sent together.
    client_stalled_coalesced_events: c.clientStalledCoalesced, sent_together_events: c.sentTogether,
    // How often the client stalled: 100 ms windows with a block of at least half the interval.
    client_stall_windows: stalls.size,
    // When they were (epoch seconds, one decimal), to line up with the bursts below.
    client_stalls_at_epoch_s: [...stalls].sort((a, b) => a - b).map((w) => Math.round(BASE_EPOCH_MS / 100 + w) / 10),
    // The rest by the wall-clock second of their read (epoch seconds), to line up with a GC log.
    coalesced_by_epoch_s: coalescedByEpochS,
    metric: STREAMING ? 'one_way_event_delay' : 'request_latency_from_intended_send',
    p50_us: pct(main, 0.5), p90_us: pct(main, 0.9), p99_us: pct(main, 0.99), p999_us: pct(main, 0.999),
    max_us: main.length ? round1(main[main.length - 1]) : null,
    mean_us: main.length ? round1(main.reduce((x, y) => x + y, 0) / main.length) : null,
    first_event_p50_us: STREAMING ? pct(f, 0.5) : null, first_event_p99_us: STREAMING ? pct(f, 0.99) : null,
    first_event_samples: STREAMING ? f.length : null,
    from_send_p50_us: STREAMING ? null : pct(ls, 0.5), from_send_p99_us: STREAMING ? null : pct(ls, 0.99),
    latency_samples: STREAMING ? null : l.length,
    achieved_rps: round1(c.completionsInWindow / MEASURE_S),
    events_per_s: round1(c.measuredEvents / MEASURE_S),
    in_flight_mean: inFlightSamples.length ? round1(inFlightSamples.reduce((x, y) => x + y, 0) / inFlightSamples.length) : null,
    in_flight_max: maxInFlight, connections_opened: c.connectionsOpened,
    proxy_cpu_s: cpu,
    proxy_cpu_s_per_100k_events: cpu !== null && c.measuredEvents ? cpu / c.measuredEvents * 1e5 : null,
    proxy_cpu_s_per_1k_requests: cpu !== null && c.completionsInWindow ? cpu / c.completionsInWindow * 1e3 : null,
    // Threads that ended inside the window are missing here (not from proxy_cpu_s).
    proxy_cpu_s_by_threads: PIDS.length ? Object.fromEntries(Object.keys(win.groups1)
      .map((g) => [g, Math.max(0, win.groups1[g] - (win.groups0[g] || 0)) / CLK_TCK])) : null,
    proxy_peak_rss_mib: PIDS.length ? round1(win.hwm / 1024) : null,
    backend_cpu_s: BACKEND_PIDS.length ? (win.backend1 - win.backend0) / CLK_TCK : null,
    client_cpu_s: (win.cpu1.user + win.cpu1.system) / 1e6,
    client_loop_delay_p99_ms: round1(loop.percentile(99) / 1e6),
    loadavg_1m_start: win.load0, loadavg_1m_end: win.load1,
  };
  const line = JSON.stringify(r);
  if (OUT) fs.appendFileSync(OUT, line + '\n');
  const us = (x) => (x === null ? '-' : String(Math.round(x)));
  process.stderr.write(`churn ${TARGET} ${SCENARIO} r${ROUND}: ${measuredRequests} req (${c.failed} failed`
    + `${c.aborted ? `, ${c.aborted} aborted` : ''}${c.unsent ? `, ${c.unsent} unsent` : ''}), `
    + `${r.achieved_rps} req/s, ${STREAMING ? `${r.events_per_s} ev/s, one-way` : 'latency'} p50/p99/p99.9 `
    + `${us(r.p50_us)}/${us(r.p99_us)}/${us(r.p999_us)} µs`
    + `${STREAMING ? `, first ${us(r.first_event_p50_us)}/${us(r.first_event_p99_us)} µs, ${c.coalesced} coalesced (+${c.clientStalledCoalesced} as the client stalled, ${c.sentTogether} sent together)` : ''}`
    + `${cpu !== null ? `, cpu ${cpu.toFixed(2)} s, rss ${r.proxy_peak_rss_mib} MiB` : ''}, client cpu `
    + `${r.client_cpu_s.toFixed(2)} s, load ${win.load0}->${win.load1}\n`);
  process.exit(0);
}

// ---- run ------------------------------------------------------------------------------------
if (MODE === 'fixed') fixedLoop();
else if (MODE === 'mix') mixLoop();
else openLoop(() => 1000 / RATE, () => 16);
setTimeout(windowStart, WARMUP_S * 1000);
setTimeout(windowEnd, (WARMUP_S + MEASURE_S) * 1000);
