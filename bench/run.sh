#!/usr/bin/env bash
# Runs the spark-lance benchmark suite: builds the connector jar if it is missing, makes
# bench/.venv (pyspark, pyarrow, pylance, numpy, matplotlib from PyPI) if it is missing,
# then runs bench/run_bench.py with the arguments given, e.g.
#   bench/run.sh                       # everything, default --rows
#   bench/run.sh --rows 2000000 --only scan,pylance
# Environment:
#   LINE=4.0_2.13 (default) or 3.5_2.12: the built Spark line whose jar is measured (make bench
#     LINE=...); pyspark comes with it: the pin in requirements.txt for 4.0, 3.5.9 for 3.5.
#     (3.5_2.13 is not measurable here: pyspark 3.5 ships Scala 2.12 only.)
#   PYSPARK=x.y.z to measure under another pyspark of the line (its own bench/.venv-pyspark<x.y.z>).
#   SPARK_LANCE_JAR=/path/to/jar to measure that jar instead of the line's build.
#   PYTHON=/path/to/python to use an existing environment instead of bench/.venv;
#   REBUILD=1 to rebuild the jar even if it exists.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
version="$(cat "$repo/VERSION")"
line="${LINE:-4.0_2.13}"
scala="${line#*_}"
case "$line" in
  4.0_2.13) default_pyspark="$(sed -n 's/^pyspark==//p' "$here/requirements.txt")" ;;
  3.5_2.12) default_pyspark=3.5.9 ;;
  *) echo "bench: LINE=$line is not a line pyspark can run (4.0_2.13 or 3.5_2.12)" >&2; exit 2 ;;
esac
pyspark="${PYSPARK:-$default_pyspark}"
jar="${SPARK_LANCE_JAR:-$repo/connector/target/spark${line//./}/scala-$scala/spark-lance-$line-$version.jar}"

if [[ ! -f "$jar" || "${REBUILD:-0}" == "1" ]]; then
  echo "building $jar" >&2
  (cd "$repo" && SBT_OPTS="${SBT_OPTS:--Xmx2g}" build/sbt "spark${line//./}/assembly" < /dev/null)
fi

if [[ -z "${PYTHON:-}" ]]; then
  venv="$here/.venv"
  [[ "$pyspark" == "$default_pyspark" && "$line" == 4.0_2.13 ]] || venv="$here/.venv-pyspark$pyspark"
  if [[ ! -x "$venv/bin/python" ]]; then
    echo "creating $venv (pyspark $pyspark)" >&2
    python3 -m venv "$venv"
    sed "s/^pyspark==.*/pyspark==$pyspark/" "$here/requirements.txt" > "$venv/requirements.txt"
    "$venv/bin/pip" install -q -r "$venv/requirements.txt"
  fi
  PYTHON="$venv/bin/python"
fi

exec "$PYTHON" "$here/run_bench.py" --jar "$jar" "$@"
