#!/usr/bin/env python3
"""Rate-matched EVALSHA load for bench/cpu.sh's baseline row.

Sends per-check EVALSHA calls of one loaded script to Redis at a fixed rate, in pipelined
batches of --batch commands per write, over --tenants uniformly random tenants, for --seconds.
redis-benchmark cannot hold a rate: at full speed it hits each key several times more often per
second than the HTTP row hits a tenant, so fewer of its checks find an expired key, and that is
not the work the sidecar's Redis row does. cpu.sh passes the rate and the mean batch size the
sidecar's Redis row reached in the same round, and the sidecar's key layout.

Prints one line like bench/report.lua's:
  RESULT {"requests":N,"seconds":S,"errors":E,"p99_ms":P}
requests counts the checks answered; p99_ms is over batches (write to the batch's last reply).
Speaks RESP over a raw socket (no client library to install); it only parses what the script
answers: arrays of integers, and error lines, which are counted and make the run fail.
"""
import argparse
import collections
import json
import random
import select
import socket
import sys
import time


def encode(*parts):
    """One RESP command: an array of bulk strings."""
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class ReplyCounter:
    """Counts complete top-level replies in a stream of arrays of integers (and errors)."""

    def __init__(self):
        self.rest = b""
        self.left = 0      # elements still owed by the array being read
        self.errors = 0
        self.first_error = None

    def feed(self, data):
        """Takes received bytes, returns how many replies they completed."""
        lines = (self.rest + data).split(b"\r\n")
        self.rest = lines.pop()  # an unfinished line waits for the next read
        done = 0
        for line in lines:
            kind = line[:1]
            if self.left:
                if kind != b":":
                    raise ValueError("unexpected element in a reply: %r" % line)
                self.left -= 1
                if not self.left:
                    done += 1
            elif kind == b"*":
                self.left = int(line[1:])
                if self.left <= 0:
                    self.left = 0
                    done += 1
            elif kind == b"-":
                self.errors += 1
                self.first_error = self.first_error or line.decode(errors="replace")
                done += 1
            else:  # a lone integer, status or nil reply
                done += 1
        return done


def run(args):
    key_of = args.key.split("{}")
    argv = args.argv.split(",") if args.argv else []
    commands = [encode("EVALSHA", args.sha, "1", key_of[0] + "t%d" % t + key_of[1], *argv)
                for t in range(args.tenants)]
    sock = socket.create_connection(("127.0.0.1", args.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    counter = ReplyCounter()
    pending = collections.deque()  # [time written, replies still owed] per batch
    latencies = []
    sent = answered = 0

    def read(timeout):
        nonlocal answered
        ready, _, _ = select.select([sock], [], [], max(0.0, timeout))
        if not ready:
            return
        data = sock.recv(1 << 16)
        if not data:
            raise ConnectionError("redis closed the connection")
        n = counter.feed(data)
        answered += n
        now = time.monotonic()
        while n and pending:
            take = min(n, pending[0][1])
            pending[0][1] -= take
            n -= take
            if not pending[0][1]:
                latencies.append(now - pending.popleft()[0])

    interval = args.batch / args.rate
    start = time.monotonic()
    end = start + args.seconds
    next_write = start
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now >= next_write:
            # Behind schedule (a busy machine), batches go out back to back until caught up: the
            # rate over the row is kept, not the spacing.
            sock.sendall(b"".join(random.choices(commands, k=args.batch)))
            pending.append([now, args.batch])
            sent += args.batch
            next_write += interval
            read(0)
        else:
            read(min(next_write, end) - now)
    seconds = time.monotonic() - start
    give_up = time.monotonic() + 10
    while answered < sent and time.monotonic() < give_up:
        read(give_up - time.monotonic())
    sock.close()
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000 if latencies else 0.0
    print("RESULT " + json.dumps({"requests": answered, "seconds": round(seconds, 3),
                                  "errors": counter.errors + (sent - answered), "p99_ms": round(p99, 3)},
                                 separators=(",", ":")))
    if counter.errors or answered < sent:
        print("evalsha_driver: %d errors (first: %s), %d of %d unanswered"
              % (counter.errors, counter.first_error, sent - answered, sent), file=sys.stderr)
        return 1
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--sha", required=True, help="SHA1 of a script already loaded (SCRIPT LOAD)")
    p.add_argument("--key", required=True, help="the key with {} where the tenant (t<i>) goes")
    p.add_argument("--argv", default="", help="the script's ARGV, comma separated")
    p.add_argument("--rate", type=float, required=True, help="checks per second")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--batch", type=int, default=16, help="EVALSHA commands per write")
    p.add_argument("--tenants", type=int, default=10000)
    return run(p.parse_args())


if __name__ == "__main__":
    sys.exit(main())
