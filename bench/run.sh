#!/usr/bin/env bash
# Runs the spark-lance benchmark suite: builds the connector jar if it is missing, makes
# bench/.venv (pyspark, pyarrow, pylance, numpy, matplotlib from PyPI) if it is missing,
# then runs bench/run_bench.py with the arguments given, e.g.
#   bench/run.sh                       # everything, default --rows
#   bench/run.sh --rows 2000000 --only scan,pylance
# Environment: PYTHON=/path/to/python to use an existing environment instead of bench/.venv;
# REBUILD=1 to rebuild the jar even if it exists.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
jar="$repo/connector/target/scala-2.13/spark-lance_2.13-0.1.0.jar"

if [[ ! -f "$jar" || "${REBUILD:-0}" == "1" ]]; then
  echo "building $jar" >&2
  (cd "$repo" && SBT_OPTS="${SBT_OPTS:--Xmx2g}" build/sbt connector/assembly < /dev/null)
fi

if [[ -z "${PYTHON:-}" ]]; then
  if [[ ! -x "$here/.venv/bin/python" ]]; then
    echo "creating $here/.venv" >&2
    python3 -m venv "$here/.venv"
    "$here/.venv/bin/pip" install -q -r "$here/requirements.txt"
  fi
  PYTHON="$here/.venv/bin/python"
fi

exec "$PYTHON" "$here/run_bench.py" --jar "$jar" "$@"
