"""pylance 14 as a long-lived co-process for the Scala suites (io.sparklance.testutil.Pylance).

One JSON request per line on stdin: {"module": "txn_matrix", "fn": "describe", "args": [...]};
one JSON reply per line on stdout: {"value": ...} or {"error": "<traceback>"}. `module` is a
file next to this one; each suite keeps its pylance side in a module of its own. Importing
lance once per test JVM instead of once per call keeps pylance-backed suites fast.
"""
import importlib
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    out = sys.stdout
    # Whatever the modules print must not corrupt the reply stream.
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            fn = getattr(importlib.import_module(req["module"]), req["fn"])
            reply = {"value": fn(*req.get("args", []))}
        except Exception:  # noqa: BLE001 - reported to the suite, which fails the test
            reply = {"error": traceback.format_exc()}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
