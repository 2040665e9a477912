#!/usr/bin/env python3
"""Totals of one callgrind dump: user-space instructions (Ir) and heap allocations.

Allocations are the calls into the C allocator's entry points (operator new and Asio's
frame allocator end there), summed over every caller in the dump outside the allocator. Prints
`instructions=N allocations=M`, or with --per K those divided by K.

    bench/callgrind_counts.py DUMP [--per K]
"""
import re
import sys

ALLOCATORS = {"malloc", "calloc", "realloc", "memalign", "aligned_alloc", "posix_memalign"}
# glibc's entry points call one another (memalign -> _mid_memalign -> malloc): a call made
# from inside the allocator is part of the allocation already counted.
INSIDE = ("_mid_memalign", "__libc_", "_int_")


def inside_allocator(name):
    return name in ALLOCATORS or name.startswith(INSIDE)


def counts(path):
    names = {}  # compressed function ids -> names (fn= and cfn= share them)
    total = None
    allocations = 0
    callee = None
    caller = ""
    with open(path, encoding="utf-8", errors="replace") as dump:
        for line in dump:
            if line.startswith(("fn=", "cfn=")):
                key, _, rest = line.rstrip("\n").partition("=")
                m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
                name = rest
                if m:
                    name = m.group(2) if m.group(2) is not None else names.get(m.group(1), "")
                    names.setdefault(m.group(1), name)
                callee = name if key == "cfn" else None
                if key == "fn":
                    caller = name
            elif line.startswith("calls="):
                if callee in ALLOCATORS and not inside_allocator(caller):
                    allocations += int(line[6:].split()[0])
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
    if total is None:
        raise SystemExit(f"{path}: no summary line (not a callgrind dump?)")
    return total, allocations


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--per"):
        raise SystemExit(__doc__)
    total, allocations = counts(argv[1])
    if len(argv) == 4:
        per = float(argv[3])
        print(f"instructions={total / per:.0f} allocations={allocations / per:.2f}")
    else:
        print(f"instructions={total} allocations={allocations}")


if __name__ == "__main__":
    main(sys.argv)
