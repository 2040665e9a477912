#!/usr/bin/env python3
"""Validates quota webhook event bodies against docs/schema/usage-event.schema.json.

Usage: validate_events.py SCHEMA EVENTS_FILE (one JSON body a line). Exits 0 when every body
is valid and window_start <= crossed_at < window_end holds, else 1, naming each failure.
"""
import json
import sys

import jsonschema


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    failed = 0
    with open(sys.argv[2], encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            event = json.loads(line)
            for error in validator.iter_errors(event):
                print(f"event {n}: {error.message}", file=sys.stderr)
                failed += 1
            if not failed and not event["window_start"] <= event["crossed_at"] < event["window_end"]:
                print(f"event {n}: crossed_at outside its window: {line.strip()}", file=sys.stderr)
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
