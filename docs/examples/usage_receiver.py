#!/usr/bin/env python3
"""A quota webhook receiver that emails the tenant (docs/operations.md, "Quota webhooks").

It verifies the RateLimit-Signature of each event with the target's secret, drops an event id
it has seen (a retry), and writes the email from the event alone: every figure the text needs
(plan, window, when, used, limit) is in the event. Sending is left to your mailer: here the
message is printed (replace send() with smtplib or your provider's API).

Run it as a server:        WEBHOOK_SECRET=... python3 usage_receiver.py serve 8080
Format one event saved:    WEBHOOK_SECRET=... python3 usage_receiver.py check BODY_FILE HEADER
(`check` prints the email and exits 0, or exits 1 when the signature does not verify.)
Only the Python standard library is used.
"""
import datetime
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

TOLERANCE_SECONDS = 300  # refuse a signature made longer ago than this (a replay)


def verify(body: bytes, header: str, secret: bytes, now: float = None) -> bool:
    """True when `header` (t=<unix seconds>,v1=<hex>) signs `body` with `secret`, recently."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    t, v1 = parts.get("t", ""), parts.get("v1", "")
    if not t.isdigit() or abs((now or time.time()) - int(t)) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, v1)


def _utc(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _window(seconds: int) -> str:
    for unit, length in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % length == 0:
            n = seconds // length
            return unit if n == 1 else f"{n}-{unit}"
    return f"{seconds}-second"


def email_text(event: dict) -> str:
    """The email for one event: a subject line, a blank line, the text."""
    plan = f"{event['plan']} plan" if event.get("plan") else "plan"
    window = f"{_window(event['window']['seconds'])} window ({event['window']['name']})"
    period = f"{_utc(event['window_start'])} to {_utc(event['window_end'])}"
    if event["type"] == "debt":
        subject = f"{event['tenant']}: {event['debt']} units past the {event['policy']} limit"
        body = (f"Usage of {event['policy']} by {event['tenant']} on the {plan} went {event['debt']} units past "
                f"its limit of {event['limit']} per {window} at {_utc(event['crossed_at'])} "
                f"(alert bound: {event['bound']}). The window runs {period}.")
    else:
        share = round(event["threshold"] * 100)
        subject = f"{event['tenant']} has used {share}% of its {plan} ({event['policy']})"
        body = (f"{event['tenant']} reached {event['used']} of {event['limit']} {event['policy']} units "
                f"({share}%) in its {window} at {_utc(event['crossed_at'])}. The window runs {period}.")
    return f"Subject: {subject}\n\n{body}\n(event {event['id']})\n"


def send(text: str) -> None:
    print(text, flush=True)


class Receiver(BaseHTTPRequestHandler):
    seen = set()  # event ids already mailed; keep them in a store for as long as retries last

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        secret = os.environ["WEBHOOK_SECRET"].encode()
        if not verify(body, self.headers.get("RateLimit-Signature", ""), secret):
            self.send_response(401)
        else:
            event = json.loads(body)
            if event["id"] not in Receiver.seen:
                Receiver.seen.add(event["id"])
                send(email_text(event))
            self.send_response(204)
        self.end_headers()


def main(argv) -> int:
    secret = os.environ.get("WEBHOOK_SECRET", "").encode()
    if len(argv) == 3 and argv[0] == "check":
        with open(argv[1], "rb") as f:
            body = f.read()
        if not verify(body, argv[2], secret):
            print("signature does not verify", file=sys.stderr)
            return 1
        send(email_text(json.loads(body)))
        return 0
    if len(argv) == 2 and argv[0] == "serve":
        HTTPServer(("0.0.0.0", int(argv[1])), Receiver).serve_forever()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
