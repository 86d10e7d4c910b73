#!/usr/bin/env python3
"""Soak client for bench/soak.sh: N concurrent streaming chat requests to tokengap for a fixed
time, each one playing a scenario (a normal read, a client that cancels mid-stream, a slow
reader, an engine that resets the connection mid-stream, an engine error), and one JSON line per
request with what the client saw. Standard library only (asyncio, raw HTTP/1.1), loopback only.

  soak_client.py --port 27580 --streams 500 --duration-s 900 --out client.jsonl

Results: completed ([DONE] and the terminating chunk), cancelled (we closed it), truncated (the
stream ended without [DONE]: an engine reset or death), http_<status> (no stream: an error
response), connect_error, client_timeout.
"""
import argparse
import asyncio
import json
import random
import socket
import struct
import sys
import time
from collections import Counter

# name: (weight, what the request asks for); tokens are output tokens (max_tokens, ignore_eos).
SCENARIOS = {
    "normal": 50,
    "cancel": 15,       # the client closes after a few events (FIN, or RST for half of them)
    "slow": 10,         # a 4 KiB receive buffer, a 512-byte read every 100 ms
    "reset": 10,        # X-Sim-Reset-After: the engine resets the TCP connection mid-stream
    "stall": 5,         # X-Sim-Stall: the engine's HTTP layer holds one event for 1.5 s
    "bad_request": 5,   # max_tokens over max-model-len: the engine answers 400
    "unknown_model": 5, # the engine answers 404
}
REQUEST_TIMEOUT_S = 240


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--model", default="sim-llama-3-8b")
    p.add_argument("--streams", type=int, default=500)
    p.add_argument("--duration-s", type=float, default=900)
    p.add_argument("--min-tokens", type=int, default=16)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("--progress-s", type=float, default=10)
    args = p.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("soak_client: loopback only")
    return args


def request_bytes(args, scenario, rng, request_id):
    tokens = rng.randint(args.min_tokens, args.max_tokens)
    model = args.model
    headers = {"X-Request-Id": request_id}
    if scenario == "reset":
        headers["X-Sim-Reset-After"] = str(rng.randint(0, max(0, tokens - 2)))
    elif scenario == "stall":
        headers["X-Sim-Stall"] = "%d:1500" % rng.randint(0, tokens - 1)
    elif scenario == "bad_request":
        tokens = 1_000_000
    elif scenario == "unknown_model":
        model = "no-such-model"
    body = json.dumps({
        "model": model,
        "messages": [{"role": "user", "content": "soak %s %s" % (request_id, " ".join(
            rng.choice(("alpha", "beta", "gamma", "delta")) for _ in range(rng.randint(4, 40))))}],
        "max_tokens": tokens,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }).encode()
    head = "POST /v1/chat/completions HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n" \
           "Accept: text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n" % (
               args.host, args.port, len(body))
    head += "".join("%s: %s\r\n" % kv for kv in headers.items())
    return (head + "\r\n").encode() + body, tokens


class Body:
    """De-chunks the response body as it arrives and counts SSE events."""

    def __init__(self, chunked):
        self.chunked = chunked
        self.pending = b""
        self.data = b""
        self.events = 0
        self.done = False
        self.terminated = False  # the terminating zero-size chunk arrived

    def feed(self, raw):
        if not self.chunked:
            self._data(raw)
            return
        self.pending += raw
        while not self.terminated:
            line_end = self.pending.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.pending[:line_end].split(b";")[0] or b"0", 16)
            if len(self.pending) < line_end + 2 + size + 2:
                return
            self._data(self.pending[line_end + 2:line_end + 2 + size])
            self.pending = self.pending[line_end + 2 + size + 2:]
            self.terminated = size == 0

    def _data(self, data):
        self.data += data
        while True:
            end = self.data.find(b"\n\n")
            if end < 0:
                break
            event, self.data = self.data[:end], self.data[end + 2:]
            self.events += 1
            if event.strip() == b"data: [DONE]":
                self.done = True


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return status, headers


async def one_request(args, scenario, rng, request_id):
    result = {"id": request_id, "scenario": scenario, "t": round(time.time(), 3)}
    started = time.monotonic()
    raw, tokens = request_bytes(args, scenario, rng, request_id)
    result["max_tokens"] = tokens
    writer = None
    body = None
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if scenario == "slow":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, (args.host, args.port))
        except OSError as ex:
            sock.close()
            result["result"] = "connect_error"
            result["error"] = str(ex)
            return result
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        writer.write(raw)
        await writer.drain()
        status, headers = await read_head(reader)
        result["status"] = status
        body = Body("chunked" in headers.get("transfer-encoding", ""))
        if status != 200:
            while chunk := await reader.read(65536):
                body.feed(chunk)
            result["result"] = "http_%d" % status
            return result
        cancel_after = rng.randint(1, 12) if scenario == "cancel" else -1
        read_size = 512 if scenario == "slow" else 65536
        while True:
            chunk = await reader.read(read_size)
            if not chunk:
                break
            body.feed(chunk)
            if 0 <= cancel_after <= body.events:
                if rng.random() < 0.5:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    result["cancel"] = "rst"
                else:
                    result["cancel"] = "fin"
                result["result"] = "cancelled"
                return result
            if body.terminated:
                break
            if scenario == "slow":
                await asyncio.sleep(0.1)
        result["result"] = "completed" if body.done and (body.terminated or not body.chunked) else "truncated"
        return result
    except (ConnectionError, asyncio.IncompleteReadError, OSError) as ex:
        result["result"] = "truncated" if result.get("status") == 200 else "connect_error"
        result["error"] = type(ex).__name__
        return result
    finally:
        if body is not None:
            result["events"] = body.events
        result["ms"] = round((time.monotonic() - started) * 1000)
        if writer is not None:
            writer.close()


async def worker(args, index, deadline, out, counts):
    rng = random.Random(args.seed * 100003 + index)
    names, weights = zip(*SCENARIOS.items())
    n = 0
    while time.monotonic() < deadline:
        scenario = rng.choices(names, weights)[0]
        request_id = "soak-%d-%d" % (index, n)
        n += 1
        try:
            result = await asyncio.wait_for(one_request(args, scenario, rng, request_id), REQUEST_TIMEOUT_S)
        except asyncio.TimeoutError:
            result = {"id": request_id, "scenario": scenario, "result": "client_timeout"}
        counts[result["result"]] += 1
        out.write(json.dumps(result) + "\n")
        if result["result"] == "connect_error" or result.get("status", 0) >= 500:
            await asyncio.sleep(0.5)  # an engine or proxy that is down: do not spin


async def main():
    args = parse_args()
    deadline = time.monotonic() + args.duration_s
    counts = Counter()
    with open(args.out, "w") as out:
        tasks = [asyncio.create_task(worker(args, i, deadline, out, counts)) for i in range(args.streams)]

        async def progress():
            while True:
                await asyncio.sleep(args.progress_s)
                print("soak_client: %s %s" % (time.strftime("%H:%M:%S"), dict(sorted(counts.items()))),
                      file=sys.stderr, flush=True)

        reporter = asyncio.create_task(progress())
        await asyncio.gather(*tasks)
        reporter.cancel()
    print(json.dumps({"client_results": dict(sorted(counts.items())), "requests": sum(counts.values())}))


if __name__ == "__main__":
    asyncio.run(main())
