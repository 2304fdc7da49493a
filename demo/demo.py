#!/usr/bin/env python3
"""spark-lance demo: read a Lance dataset's schema, history, tags and per-version row counts
through Spark's format("lance").

    make demo                                   # builds, installs, runs this on a fixture
    .venv/bin/python demo/demo.py [DATASET]     # any Lance dataset directory
"""

from __future__ import annotations

import sys
from pathlib import Path

import spark_lance

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO_ROOT / "src-test-data" / "datasets" / "multifrag_2.2.lance"


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_DATASET
    if not path.exists():
        print(f"demo: dataset {path} does not exist", file=sys.stderr)
        return 2
    path = str(path.resolve())

    spark = spark_lance.session(
        app_name="spark-lance-demo",
        conf={
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",  # commit times below are shown in UTC
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        print(f"== Lance dataset {path}")
        print(f"   (connector jar: {spark_lance.jar_path()})\n")

        df = spark.read.format("lance").load(path)
        print("== Schema (latest version)")
        df.printSchema()

        print("== First rows (latest version)")
        df.show(5, truncate=False)

        print(
            "== Version history (times in UTC): spark.read.format('lance').option('metadata_table', 'versions')"
        )
        versions = spark.read.format("lance").option("metadata_table", "versions").load(path)
        versions.orderBy("version").show(truncate=False)

        print("== Tags: spark.read.format('lance').option('metadata_table', 'tags')")
        tags = spark.read.format("lance").option("metadata_table", "tags").load(path)
        tags.orderBy("tag").show(truncate=False)

        print("== Row counts")
        latest = df.count()
        print(f"latest            : {latest} rows")
        for row in versions.orderBy("version").select("version").collect():
            v = row["version"]
            n = spark.read.format("lance").option("version", v).load(path).count()
            print(f"version {v:<10}: {n} rows")
        for row in tags.orderBy("tag").collect():
            n = spark.read.format("lance").option("version", row["tag"]).load(path).count()
            print(f"tag {row['tag']:<14}: {n} rows (version {row['version']})")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
