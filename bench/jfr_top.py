#!/usr/bin/env python3
"""Summarises the CPU samples of a JFR recording (jdk.ExecutionSample).

    python bench/jfr_top.py recording.jfr [--thread "Executor task launch"] [--top 25]

Prints three tables: the hottest top-of-stack methods (self time), the methods that appear
anywhere in the sampled stacks (inclusive time), and the same inclusive view restricted to
this connector's classes (io.sparklance.*). Needs the JDK's `jfr` tool on PATH.
"""

import argparse
import collections
import json
import subprocess
import sys


def frames(ev):
    st = ev["values"].get("stackTrace") or {}
    for f in st.get("frames", []):
        m = f["method"]
        cls = m["type"]["name"].replace("/", ".")
        yield f"{cls}.{m['name']}", f.get("lineNumber")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("jfr")
    ap.add_argument(
        "--thread", default="Executor task launch", help="substring of the sampled thread name"
    )
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args(argv)
    raw = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", a.jfr],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    events = json.loads(raw)["recording"]["events"]
    selfc, incl, ours = collections.Counter(), collections.Counter(), collections.Counter()
    n = 0
    for ev in events:
        th = (ev["values"].get("sampledThread") or {}).get("javaName") or ""
        if a.thread and a.thread not in th:
            continue
        fs = list(frames(ev))
        if not fs:
            continue
        n += 1
        selfc[fs[0][0]] += 1
        seen = set()
        for name, _ in fs:
            if name not in seen:
                seen.add(name)
                incl[name] += 1
                if name.startswith("io.sparklance."):
                    ours[name] += 1
    print(f"{n} samples on threads matching {a.thread!r}\n")
    for title, c in (
        ("self (top of stack)", selfc),
        ("inclusive", incl),
        ("inclusive, io.sparklance.* only", ours),
    ):
        print(f"## {title}")
        for name, k in c.most_common(a.top):
            print(f"{100 * k / max(n, 1):6.1f}%  {name}")
        print()


if __name__ == "__main__":
    sys.exit(main())
