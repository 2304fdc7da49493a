"""Seeded property test of scans: random schema + random data, written by pylance, read by
Spark and by pylance, compared value by value.

Each seed gives one case (tests/property/gen.py): a file format (seed % 4: legacy, 2.0, 2.1,
2.2), a random Arrow schema (every type the connector maps, nested lists/structs/maps, field
metadata forcing 2.1/2.2 encodings), random values (null patterns, long strings, runs,
extremes, NaN), random dataset operations (fragments, appends, deletes, stable row ids, page
sizes) and a random read (split_size, batch_size, a projection, nested struct fields).

The checks, all against what pylance 14.0.2 reads from the same dataset:
- Spark's schema is the documented mapping (lance_types) of pylance's schema;
- ``count()`` equals ``count_rows()``;
- a full scan equals ``to_table()``, in order (fragment order), blob columns equal to the bytes
  ``take_blobs`` returns;
- a projection of random columns in random order equals ``to_table(columns=...)``;
- ``select("s.a")`` of nested struct fields equals the child of pylance's struct column
  (null where the parent is null).

Seeds: by default DEFAULT_CASES cases from DEFAULT_SEED. More on demand:
    SPARK_LANCE_PROPERTY_CASES=300 pytest tests/test_property_scan.py      # 300 cases
    SPARK_LANCE_PROPERTY_SEED=1234 pytest tests/test_property_scan.py      # just seed 1234
    SPARK_LANCE_PROPERTY_SEED=5000 SPARK_LANCE_PROPERTY_CASES=100 ...      # 5000..5099
    SPARK_LANCE_PROPERTY_SEEDS="1006 1074 5111" ...                        # just these seeds
Datasets go to $SPARK_LANCE_PROPERTY_DIR (default <tmp>/spark-lance-property); a passing case
removes its dataset, a failing one keeps it and prints its path.

If pylance itself cannot write a generated case (a pylance writer limitation, e.g. some packed
struct or per-value compression combinations), the case is skipped with pylance's message: there
is nothing for Spark to read. The generator avoids the known ones, so such skips are rare.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from property import check, gen

from lance_types import spark_schema_for_arrow, type_shape
from support import short_error

DEFAULT_SEED = 20_000
DEFAULT_CASES = 32

KNOWN_BUGS: dict[int, str] = {
    # seed -> reason (a connector bug reported with the seed); the case xfails strictly, so it
    # turns into a failure (XPASS) the moment the bug is fixed: then remove the entry.
}


def _seeds() -> list[int]:
    listed = os.environ.get("SPARK_LANCE_PROPERTY_SEEDS")
    if listed:
        return [int(x) for x in listed.replace(",", " ").split()]
    seed = os.environ.get("SPARK_LANCE_PROPERTY_SEED")
    cases = os.environ.get("SPARK_LANCE_PROPERTY_CASES")
    if seed is not None and cases is None:
        return [int(seed)]
    start = int(seed) if seed is not None else DEFAULT_SEED
    return list(range(start, start + int(cases if cases is not None else DEFAULT_CASES)))


def _params():
    out = []
    for s in _seeds():
        marks = [pytest.mark.xfail(reason=KNOWN_BUGS[s], strict=True)] if s in KNOWN_BUGS else []
        out.append(pytest.param(s, id=f"seed{s}-{gen.FORMATS[s % len(gen.FORMATS)]}", marks=marks))
    return out


def _base_dir() -> Path:
    d = Path(
        os.environ.get("SPARK_LANCE_PROPERTY_DIR")
        or Path(tempfile.gettempdir()) / "spark-lance-property"
    )
    d.mkdir(parents=True, exist_ok=True)
    return d


def _read(spark, case: gen.Case, path: Path):
    reader = spark.read.format("lance")
    if case.split_size:
        reader = reader.option("split_size", case.split_size)
    if case.batch_size:
        reader = reader.option("batch_size", case.batch_size)
    return reader.load(str(path))


@pytest.mark.parametrize("seed", _params())
def test_scan_equals_pylance(spark, seed):
    from pyspark.sql import functions as F

    case = gen.make_case(seed)
    path = _base_dir() / f"seed{seed}-{case.fmt}.lance"
    shutil.rmtree(path, ignore_errors=True)
    try:
        ds = gen.write_case(case, str(path))
    except BaseException as e:  # noqa: BLE001  (pyo3 panics are BaseExceptions)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        shutil.rmtree(path, ignore_errors=True)
        pytest.skip(f"pylance cannot write this case: {str(e).splitlines()[0][:300]}")

    # pylance's reads first: if pylance cannot read what it wrote, there is no truth to compare with.
    import pyarrow as pa

    try:
        expected_full = check.pylance_table(ds)
        expected_proj = check.pylance_table(ds, case.projection)
        expected_nested = {}
        for p in case.nested:
            t = check.pylance_table(ds, ["id", p.split(".")[0]])
            expected_nested[p] = pa.table({"id": t.column("id"), p: check.nested_child(t, p)})
        want_count = ds.count_rows()
        # Blob columns: pylance's scan returns descriptors; the bytes come from take_blobs.
        blobs = check.blob_bytes(ds, check.blob_columns(ds.schema), want_count)
        expected_full = check.with_blob_bytes(expected_full, blobs)
        expected_proj = check.with_blob_bytes(expected_proj, blobs)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        shutil.rmtree(path, ignore_errors=True)
        pytest.skip(f"pylance cannot read what it wrote: {str(e).splitlines()[0][:300]}")

    problems: list[str] = []

    def run(what: str, fn):
        try:
            for p in fn():
                problems.append(f"{what}: {p}")
        except Exception as e:  # noqa: BLE001
            problems.append(f"{what}: Spark raised {short_error(e, 600)}")

    def schema_check():
        df = _read(spark, case, path)
        want, got = type_shape(spark_schema_for_arrow(ds.schema)), type_shape(df.schema)
        return [] if want == got else [f"Spark schema {got}\n      expected {want}"]

    def count_check():
        n = _read(spark, case, path).count()
        return [] if n == want_count else [f"count() {n}, pylance count_rows() {want_count}"]

    def scan(df, expected):
        names = list(df.columns)
        id_index = names.index("id") if "id" in names else None
        return check.compare(expected, df.collect(), df.schema, names, id_index)

    run("schema", schema_check)
    run("count", count_check)
    run("full scan", lambda: scan(_read(spark, case, path), expected_full))
    run(
        f"projection {case.projection}",
        lambda: scan(_read(spark, case, path).select(*case.projection), expected_proj),
    )
    for p in case.nested:
        run(
            f"select({p!r})",
            lambda p=p: scan(
                _read(spark, case, path).select(F.col("id"), F.col(p)), expected_nested[p]
            ),
        )

    if problems:
        pytest.fail(
            f"seed {seed} (format {case.fmt}): Spark differs from pylance\n"
            + "\n".join("  - " + p for p in problems)
            + f"\ncase:\n{case.describe()}\ndataset kept at {path}\n"
            + f"reproduce: SPARK_LANCE_PROPERTY_SEED={seed} .venv/bin/python -m pytest tests/test_property_scan.py -q",
            pytrace=False,
        )
    shutil.rmtree(path, ignore_errors=True)
