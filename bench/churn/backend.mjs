// An engine stand-in for the churn benchmark: a vLLM-shaped OpenAI server written on
// Node's `net` module with a hand-written HTTP/1.1 server, so that neither end of the benchmark is
// tokengap's own code (Reactor Netty).
//
//   node bench/churn/backend.mjs --port 27600 [--interval-ms 20] [--fault 50] [--spread-ms 0]
//     [--host 127.0.0.1]
//
//   GET  /health                 200, empty
//   GET  /v1/models              a vLLM-shaped model list (model "bench-model")
//   GET  /metrics                vLLM Prometheus text; vllm:num_requests_running = live streams
//   POST /v1/chat/completions    "stream": true  -> SSE: a role event, then exactly max_tokens
//                                                   (default 16) content events, one every
//                                                   --interval-ms per stream (or the request's
//                                                   own "tg_interval_ms"), the last with
//                                                   finish_reason "length"; a usage chunk if
//                                                   stream_options.include_usage; data: [DONE]
//                                "stream" false    -> one chat.completion JSON (Content-Length)
//
// Every content event is one HTTP chunk holding one SSE event, and carries
// "tg_sent_ns":"<process.hrtime.bigint()>" taken right before its socket write (CLOCK_MONOTONIC on
// Linux: one clock for every process on the host, so a client there can compute one-way delays).
// The first content event is written at once after the role event (no prefill delay), so a
// client's time to first event is the request path's cost, not a timer's; event k (k = 0..N-1)
// is then due at arrival + k * interval (a drift-free schedule; the phase is the arrival's).
// A client that closes mid-stream stops its stream (counted as cancelled).
//
// --spread-ms S: each stream's first content event waits a uniform random 0..S ms instead (and the
// rest follow on that schedule), so that streams started together do not tick together. Without
// it a closed loop's streams keep the phases they started with, and their events come in bursts
// (like one vLLM engine step's tokens for every running sequence).
//
// --fault N: every N-th stream is cut (socket destroyed) halfway through its content events, to
// check that a client counts broken streams. Counters are printed on SIGTERM / SIGINT and served
// at GET /stats (JSON).
import net from 'node:net';
import { randomBytes } from 'node:crypto';

const args = parseArgs(process.argv.slice(2));
const HOST = args.host ?? '127.0.0.1';
const PORT = Number(args.port ?? 27600);
const INTERVAL_MS = Number(args['interval-ms'] ?? 20);
const FAULT = Number(args.fault ?? 0);
const SPREAD_MS = Number(args['spread-ms'] ?? 0);
const MODEL = 'bench-model';
const CREATED = 1764633600;

const stats = {
  connections: 0, requests: 0, streams: 0, streamsCompleted: 0, streamsCancelled: 0,
  streamsFaulted: 0, completions: 0, badRequests: 0, events: 0,
};
let liveStreams = 0;

// ---- response pieces, built once -------------------------------------------------------------
let dateHeader = '';
function refreshDate() { dateHeader = new Date().toUTCString(); }
refreshDate();
setInterval(refreshDate, 1000).unref();

const CRLF = '\r\n';
const SSE_HEAD = (date) => 'HTTP/1.1 200 OK\r\ndate: ' + date + '\r\nserver: uvicorn\r\n'
  + 'content-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\n\r\n';

// A content event: PREFIX(id) + a 4-byte token in the delta ... "tg_sent_ns":"<stamp>"}\n\n. The token
// text changes from event to event, as a model's does (an event's bytes differ from the last one's from
// the token on, not only in the stamp); every token is 4 bytes, so events keep their size.
const TOKENS = [' tok', ' the', ' and', ' for', ' not', ' but', ' are', ' was'];
const EV_A = 'data: {"id":"chatcmpl-';
const EV_B = '","object":"chat.completion.chunk","created":' + CREATED + ',"model":"' + MODEL
  + '","choices":[{"index":0,"delta":{"content":"';
const EV_B2 = '"},"logprobs":null,"finish_reason":';
const EV_C = '}],"tg_sent_ns":"';
const EV_D = '"}\n\n';

function roleEvent(id) {
  return 'data: {"id":"chatcmpl-' + id + '","object":"chat.completion.chunk","created":' + CREATED
    + ',"model":"' + MODEL + '","choices":[{"index":0,"delta":{"role":"assistant","content":""},'
    + '"logprobs":null,"finish_reason":null}]}\n\n';
}

function usageEvent(id, prompt, completion) {
  return 'data: {"id":"chatcmpl-' + id + '","object":"chat.completion.chunk","created":' + CREATED
    + ',"model":"' + MODEL + '","choices":[],"usage":{"prompt_tokens":' + prompt + ',"total_tokens":'
    + (prompt + completion) + ',"completion_tokens":' + completion + '}}\n\n';
}

const DONE_CHUNK = chunk('data: [DONE]\n\n') + '0\r\n\r\n';

function chunk(s) { // ASCII only: string length = byte length
  return s.length.toString(16) + CRLF + s + CRLF;
}

function completionBody(id, prompt, completion) {
  return '{"id":"chatcmpl-' + id + '","object":"chat.completion","created":' + CREATED + ',"model":"'
    + MODEL + '","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":null,'
    + '"content":" tok tok tok tok tok tok tok tok tok tok tok tok tok tok tok tok","tool_calls":[]},'
    + '"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":' + prompt
    + ',"total_tokens":' + (prompt + completion) + ',"completion_tokens":' + completion
    + ',"prompt_tokens_details":null},"prompt_logprobs":null,"kv_transfer_params":null}';
}

function plain(status, reason, type, body, close) {
  return 'HTTP/1.1 ' + status + ' ' + reason + '\r\ndate: ' + dateHeader + '\r\nserver: uvicorn\r\n'
    + (type ? 'content-type: ' + type + '\r\n' : '') + 'content-length: ' + Buffer.byteLength(body)
    + (close ? '\r\nconnection: close' : '') + '\r\n\r\n' + body;
}

function modelsBody() {
  return JSON.stringify({
    object: 'list',
    data: [{
      id: MODEL, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'vllm', root: MODEL,
      parent: null, max_model_len: 8192,
      permission: [{
        id: 'modelperm-' + randomBytes(16).toString('hex'), object: 'model_permission',
        created: Math.floor(Date.now() / 1000), allow_create_engine: false, allow_sampling: true,
        allow_logprobs: true, allow_search_indices: false, allow_view: true, allow_fine_tuning: false,
        organization: '*', group: null, is_blocking: false,
      }],
    }],
  });
}

function metricsBody() {
  const l = '{model_name="' + MODEL + '",engine="0"}';
  return '# HELP vllm:num_requests_running Number of requests in model execution batches.\n'
    + '# TYPE vllm:num_requests_running gauge\n'
    + 'vllm:num_requests_running' + l + ' ' + liveStreams.toFixed(1) + '\n'
    + '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n'
    + '# TYPE vllm:num_requests_waiting gauge\n'
    + 'vllm:num_requests_waiting' + l + ' 0.0\n'
    + '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n'
    + '# TYPE vllm:kv_cache_usage_perc gauge\n'
    + 'vllm:kv_cache_usage_perc' + l + ' ' + Math.min(1, liveStreams / 1000).toFixed(4) + '\n'
    + '# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.\n'
    + '# TYPE vllm:num_preemptions_total counter\n'
    + 'vllm:num_preemptions_total' + l + ' 0.0\n';
}

// ---- ids: a random 8-byte prefix per process and a counter, hex ------------------------------
const ID_PREFIX = randomBytes(8).toString('hex');
let idCounter = 0;
function nextId() { return ID_PREFIX + (idCounter++).toString(16).padStart(8, '0'); }

// ---- streams ----------------------------------------------------------------------------------
class Stream {
  constructor(conn, maxTokens, includeUsage, promptTokens, intervalMs) {
    this.conn = conn;
    this.intervalMs = intervalMs;
    this.socket = conn.socket;
    this.id = nextId();
    this.maxTokens = maxTokens;
    this.includeUsage = includeUsage;
    this.promptTokens = promptTokens;
    this.k = 0;
    this.start = performance.now();
    this.timer = null;
    this.cutAt = (FAULT > 0 && stats.streams % FAULT === FAULT - 1) ? Math.max(1, maxTokens >> 1) : -1;
    // every content event but the last, by token
    this.evMid = TOKENS.map((token) => EV_A + this.id + EV_B + token + EV_B2 + 'null' + EV_C);
    this.evLast = EV_A + this.id + EV_B + TOKENS[0] + EV_B2 + '"length"' + EV_C;
    this.tick = () => this.send();
    stats.streams++;
    liveStreams++;
  }

  begin() {
    const s = this.socket;
    s.cork();
    s.write(SSE_HEAD(dateHeader));
    s.write(chunk(roleEvent(this.id)));
    s.uncork();
    if (SPREAD_MS > 0) {
      const wait = Math.random() * SPREAD_MS;
      this.start += wait;
      this.timer = setTimeout(this.tick, wait);
      return;
    }
    this.send();
  }

  send() {
    this.timer = null;
    if (this.k === this.cutAt) {
      stats.streamsFaulted++;
      this.finish();
      this.socket.destroy();
      return;
    }
    const last = this.k === this.maxTokens - 1;
    const head = last ? this.evLast : this.evMid[this.k % TOKENS.length];
    const ev = head + process.hrtime.bigint() + EV_D; // stamped right before the write
    this.socket.write(ev.length.toString(16) + CRLF + ev + CRLF);
    stats.events++;
    this.k++;
    if (!last) {
      const delay = this.start + this.k * this.intervalMs - performance.now();
      this.timer = setTimeout(this.tick, delay > 0 ? delay : 0);
      return;
    }
    const s = this.socket;
    s.cork();
    if (this.includeUsage) s.write(chunk(usageEvent(this.id, this.promptTokens, this.maxTokens)));
    s.write(DONE_CHUNK);
    s.uncork();
    stats.streamsCompleted++;
    this.finish();
    this.conn.responseDone();
  }

  cancel() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    stats.streamsCancelled++;
    this.finish();
  }

  finish() {
    liveStreams--;
    this.conn.stream = null;
  }
}

// ---- connections: a minimal HTTP/1.1 server parser -------------------------------------------
const MAX_HEAD = 64 * 1024;
const MAX_BODY = 4 * 1024 * 1024;

class Conn {
  constructor(socket) {
    this.socket = socket;
    this.buf = null; // unparsed bytes
    this.stream = null; // the stream in progress, if any
    this.busy = false; // a response is in progress (requests wait: no pipelining)
    this.closing = false;
    socket.setNoDelay(true);
    socket.on('data', (d) => this.onData(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.stream) this.stream.cancel();
      this.closing = true;
    });
    stats.connections++;
  }

  onData(d) {
    this.buf = this.buf ? Buffer.concat([this.buf, d]) : d;
    if (!this.busy) this.parse();
  }

  responseDone() {
    this.busy = false;
    if (this.closeAfter) { this.socket.end(); return; }
    if (this.buf) this.parse();
  }

  fail(status, reason, msg) {
    stats.badRequests++;
    this.socket.end(plain(status, reason, 'application/json', JSON.stringify({ error: msg }), true));
    this.buf = null;
    this.closing = true;
  }

  parse() {
    while (this.buf && !this.busy && !this.closing) {
      const buf = this.buf;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > MAX_HEAD) this.fail(431, 'Request Header Fields Too Large', 'head too large');
        return;
      }
      const head = buf.toString('latin1', 0, end);
      const lines = head.split('\r\n');
      const [method, target, version] = lines[0].split(' ');
      if (!method || !target || !version || !version.startsWith('HTTP/1.')) {
        this.fail(400, 'Bad Request', 'bad request line');
        return;
      }
      let contentLength = 0;
      let chunked = false;
      let close = version === 'HTTP/1.0';
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i];
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'content-length') contentLength = Number(value);
        else if (name === 'transfer-encoding') chunked = value.toLowerCase().includes('chunked');
        else if (name === 'connection') {
          const v = value.toLowerCase();
          if (v.includes('close')) close = true;
          else if (v.includes('keep-alive')) close = false;
        }
      }
      let body;
      let rest;
      if (chunked) {
        const decoded = decodeChunked(buf, end + 4);
        if (decoded === null) return; // incomplete
        if (decoded === false) { this.fail(400, 'Bad Request', 'bad chunked body'); return; }
        body = decoded.body;
        rest = decoded.next;
      } else {
        if (!Number.isFinite(contentLength) || contentLength < 0 || contentLength > MAX_BODY) {
          this.fail(400, 'Bad Request', 'bad content-length');
          return;
        }
        if (buf.length < end + 4 + contentLength) return; // incomplete
        body = buf.subarray(end + 4, end + 4 + contentLength);
        rest = end + 4 + contentLength;
      }
      this.buf = rest < buf.length ? buf.subarray(rest) : null;
      this.closeAfter = close;
      stats.requests++;
      this.handle(method, target, body);
    }
  }

  send(text) {
    this.socket.write(text);
    if (this.closeAfter) { this.socket.end(); this.closing = true; }
  }

  handle(method, target, body) {
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    if (method === 'POST' && path === '/v1/chat/completions') {
      let req;
      try { req = JSON.parse(body.toString('utf8')); } catch { req = null; }
      if (req === null || typeof req !== 'object') {
        stats.badRequests++;
        this.send(plain(400, 'Bad Request', 'application/json', '{"object":"error","message":"bad JSON","type":"BadRequestError","param":null,"code":400}'));
        return;
      }
      const maxTokens = Math.max(1, Math.floor(Number(req.max_tokens ?? 16)) || 16);
      const promptTokens = Math.max(1, Math.ceil(JSON.stringify(req.messages ?? '').length / 4));
      // A client may set its stream's cadence (the churn client does, so that one backend
      // serves scenarios of different intervals); otherwise --interval-ms.
      const intervalMs = req.tg_interval_ms === undefined ? INTERVAL_MS : Number(req.tg_interval_ms);
      if (!(intervalMs > 0 && intervalMs <= 60000)) {
        stats.badRequests++;
        this.send(plain(400, 'Bad Request', 'application/json', '{"object":"error","message":"tg_interval_ms must be a number of milliseconds in (0, 60000]","type":"BadRequestError","param":"tg_interval_ms","code":400}'));
        return;
      }
      if (req.stream === true) {
        const includeUsage = !!(req.stream_options && req.stream_options.include_usage);
        this.busy = true;
        this.stream = new Stream(this, maxTokens, includeUsage, promptTokens, intervalMs);
        this.stream.begin();
        return;
      }
      stats.completions++;
      this.send(plain(200, 'OK', 'application/json', completionBody(nextId(), promptTokens, maxTokens)));
      return;
    }
    if (method === 'GET' && path === '/health') { this.send(plain(200, 'OK', null, '')); return; }
    if (method === 'GET' && path === '/v1/models') { this.send(plain(200, 'OK', 'application/json', modelsBody())); return; }
    if (method === 'GET' && path === '/metrics') {
      this.send(plain(200, 'OK', 'text/plain; version=0.0.4; charset=utf-8', metricsBody()));
      return;
    }
    if (method === 'GET' && path === '/stats') {
      this.send(plain(200, 'OK', 'application/json', JSON.stringify({ ...stats, liveStreams })));
      return;
    }
    this.send(plain(404, 'Not Found', 'application/json', '{"detail":"Not Found"}'));
  }
}

// Decodes a chunked body starting at `at`: {body, next} | null (incomplete) | false (malformed).
function decodeChunked(buf, at) {
  const parts = [];
  let pos = at;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) return null;
    const size = parseInt(buf.toString('latin1', pos, eol).split(';')[0].trim(), 16);
    if (!Number.isFinite(size) || size < 0) return false;
    pos = eol + 2;
    if (size === 0) {
      // Trailers (ignored) until an empty line.
      for (;;) {
        const e = buf.indexOf('\r\n', pos);
        if (e < 0) return null;
        if (e === pos) return { body: Buffer.concat(parts), next: e + 2 };
        pos = e + 2;
      }
    }
    if (buf.length < pos + size + 2) return null;
    parts.push(buf.subarray(pos, pos + size));
    pos += size + 2;
  }
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error('unexpected argument ' + argv[i]);
    const key = argv[i].slice(2);
    o[key] = argv[i + 1];
    i++;
  }
  return o;
}

const server = net.createServer({ noDelay: true }, (socket) => new Conn(socket));
server.maxConnections = 65536;
server.listen({ host: HOST, port: PORT, backlog: 4096 }, () => {
  console.log(`churn backend on http://${HOST}:${PORT} (interval ${INTERVAL_MS} ms`
    + `${FAULT > 0 ? `, cuts 1 in ${FAULT} streams` : ''}, pid ${process.pid})`);
});

function bye() {
  console.log('churn backend: ' + JSON.stringify({ ...stats, liveStreams }));
  process.exit(0);
}
process.on('SIGTERM', bye);
process.on('SIGINT', bye);
