"""Errors: each bad input raises an error whose message names the path, version, tag or file
it is about. Every case first checks that pylance also refuses the same input, so the damage
or the bad name is real."""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import pytest

import support

GENERATED = support.generated_fixtures()
DATASET_CASES = [pytest.param(f, id=f.name) for f in support.all_fixtures()]
# Damage tests: every manifest naming scheme and file format, without repeating each scenario
# four times: all "_2.2" and "_legacy" fixtures, plus all v1-named ones.
DAMAGE_FIXTURES = [
    f for f in GENERATED if f.name.endswith(("_2.2", "_legacy")) or f.name.startswith("v1_naming")
]


def pylance_refuses(fn) -> None:
    """fn, a pylance call, must fail. pylance may also panic on a damaged file: pyo3's
    PanicException derives from BaseException, not Exception."""
    try:
        fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001
        return
    pytest.fail("pylance accepted the input, so this case does not test what it claims")


def read(spark, path, **options):
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def spark_error(fn) -> str:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        return f"{type(e).__name__}: {e}"
    pytest.fail("Spark read succeeded, but it must raise an error")


def test_missing_path(spark, tmp_path):
    p = tmp_path / "no_such_dataset.lance"
    pylance_refuses(lambda: lance.dataset(str(p)))
    msg = spark_error(lambda: read(spark, p).count())
    assert str(p) in msg, msg


def test_directory_that_is_not_a_dataset(spark, tmp_path):
    p = tmp_path / "not_lance"
    p.mkdir()
    (p / "readme.txt").write_text("just a directory\n")
    (p / "data").mkdir()
    pylance_refuses(lambda: lance.dataset(str(p)))
    msg = spark_error(lambda: read(spark, p).count())
    assert str(p) in msg, msg


def test_plain_file_is_not_a_dataset(spark, tmp_path):
    p = tmp_path / "file.lance"
    p.write_bytes(b"not a lance dataset")
    pylance_refuses(lambda: lance.dataset(str(p)))
    msg = spark_error(lambda: read(spark, p).count())
    assert str(p) in msg, msg


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_unknown_version(spark, fx):
    missing = fx.latest + 1000
    pylance_refuses(lambda: lance.dataset(str(fx.path), version=missing))
    msg = spark_error(lambda: read(spark, fx.path, version=missing).count())
    assert str(fx.path) in msg, msg
    assert str(missing) in msg, msg


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_unknown_tag(spark, fx):
    tag = "no_such_tag_xyz"
    pylance_refuses(lambda: lance.dataset(str(fx.path), version=tag))
    msg = spark_error(lambda: read(spark, fx.path, version=tag).count())
    assert str(fx.path) in msg, msg
    assert tag in msg, msg


def _truncate_half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _truncate_footer(data: bytes) -> bytes:
    return data[:-8]  # cuts the footer's magic


def _empty(data: bytes) -> bytes:
    return b""


def _corrupt_body(data: bytes) -> bytes:
    # Same length, intact footer; the protobuf body in the middle is overwritten.
    lo, hi = len(data) // 3, len(data) - 16
    return data[:lo] + b"\xff" * (hi - lo) + data[hi:]


DAMAGES = {
    "truncated_half": _truncate_half,
    "truncated_footer": _truncate_footer,
    "empty": _empty,
    "corrupt_body": _corrupt_body,
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("fx", [pytest.param(f, id=f.name) for f in DAMAGE_FIXTURES])
def test_damaged_manifest(spark, fx, damage, tmp_path):
    copy = tmp_path / Path(fx.path).name
    shutil.copytree(fx.path, copy)
    latest = lance.dataset(str(copy)).version
    manifest = support.manifest_file(copy, latest)
    manifest.write_bytes(DAMAGES[damage](manifest.read_bytes()))

    # pylance refuses it too (the damage is real).
    pylance_refuses(lambda: lance.dataset(str(copy), version=latest).count_rows())

    for options in ({"version": latest}, {}):
        msg = spark_error(lambda: read(spark, copy, **options).count())
        assert manifest.name in msg and str(copy) in msg, (
            f"reading {options or 'latest'}: the error must name the damaged manifest {manifest}: {msg[:2000]}"
        )
    # Older versions stay readable and agree with pylance.
    older = [v for v in fx.versions if v < latest]
    if older:
        v = older[-1]
        assert (
            read(spark, copy, version=v).count() == lance.dataset(str(copy), version=v).count_rows()
        )


# ---- Errors a Spark user can catch: Spark's own exception classes ----------------------------


def error_class(e):
    """The error class (Spark 4's condition) and SQLSTATE of a PySpark error."""
    return e.getErrorClass(), e.getSqlState()


def first_line(e):
    return str(e).splitlines()[0]


def test_a_missing_path_is_an_analysis_exception(spark, tmp_path):
    from pyspark.errors import AnalysisException

    import spark_lance

    p = tmp_path / "no_such.lance"
    for read_it in (
        lambda: spark.read.format("lance").load(str(p)),
        lambda: spark_lance.read_lance(spark, str(p)),
    ):
        with pytest.raises(AnalysisException) as e:
            read_it()
        assert error_class(e.value) == ("LANCE_NOT_FOUND", "42K03")
        assert first_line(e.value).startswith("Lance dataset path does not exist") and str(
            p
        ) in first_line(e.value), str(e.value)


def test_a_directory_that_is_not_a_dataset_is_an_analysis_exception(spark, tmp_path):
    from pyspark.errors import AnalysisException

    p = tmp_path / "not_lance"
    (p / "data").mkdir(parents=True)
    with pytest.raises(AnalysisException) as e:
        spark.read.format("lance").load(str(p))
    assert error_class(e.value) == ("LANCE_NOT_FOUND", "42K03")
    assert str(p) in first_line(e.value)


def test_unknown_options_and_versions_are_analysis_exceptions(spark, tmp_path):
    import pyarrow as pa
    from pyspark.errors import AnalysisException

    p = str(tmp_path / "ds")
    lance.write_dataset(pa.table({"id": [1, 2]}), p)
    with pytest.raises(AnalysisException) as e:
        spark.read.format("lance").option("verison", 1).load(p)
    assert error_class(e.value) == ("LANCE_UNKNOWN_OPTION", "42K06")
    assert first_line(e.value).startswith("Unknown option 'verison' for format lance")
    with pytest.raises(AnalysisException) as e:
        spark.range(2).write.format("lance").mode("append").option("max_rows", 1).save(p)
    assert error_class(e.value)[0] == "LANCE_UNKNOWN_OPTION"
    with pytest.raises(AnalysisException) as e:
        spark.read.format("lance").option("version", 99).load(p)
    assert error_class(e.value)[0] == "LANCE_NOT_FOUND"
    assert "99" in first_line(e.value)


def test_a_dataframe_that_does_not_fit_is_an_analysis_exception(spark, tmp_path):
    import pyarrow as pa
    from pyspark.errors import AnalysisException

    p = str(tmp_path / "ds")
    lance.write_dataset(pa.table({"id": pa.array([1, 2], pa.int64())}), p)
    with pytest.raises(AnalysisException) as e:
        spark.range(2).selectExpr("id", "'x' as extra").write.format("lance").mode("append").save(p)
    assert error_class(e.value) == ("LANCE_SCHEMA_MISMATCH", "42K09")
    assert "extra" in first_line(e.value)
    assert lance.dataset(p).version == 1


def test_a_bad_option_value_is_an_illegal_argument(spark, tmp_path):
    import pyarrow as pa
    from pyspark.errors import IllegalArgumentException

    p = str(tmp_path / "ds")
    lance.write_dataset(pa.table({"id": [1]}), p)
    with pytest.raises(IllegalArgumentException) as e:
        spark.read.format("lance").option("batch_size", "-1").load(p).collect()
    assert "batch_size" in first_line(e.value)


def test_a_missing_path_in_sql_is_an_analysis_exception(spark, tmp_path):
    from pyspark.errors import AnalysisException

    c = support.lance_catalog(spark)
    with pytest.raises(AnalysisException):
        spark.sql(f"select * from {c}.`{tmp_path / 'no_such.lance'}`")


def test_the_maintenance_helpers_raise_the_same_classes(spark, tmp_path):
    from pyspark.errors import AnalysisException

    import spark_lance

    p = str(tmp_path / "no_such.lance")
    with pytest.raises(AnalysisException) as e:
        spark_lance.compact_files(spark, p)
    assert error_class(e.value)[0] == "LANCE_NOT_FOUND"
    assert first_line(e.value).startswith("Lance dataset path does not exist")
    with pytest.raises(AnalysisException):
        spark_lance.LanceTable(spark, p).version


def gated_append(spark, path, gate):
    """An append whose tasks (run after it read the dataset) wait until `gate`/go exists."""
    from pyspark.sql.functions import udf

    started, go = str(gate / "started"), str(gate / "go")

    @udf("long")
    def held(x):
        import os
        import time

        open(started, "w").close()
        deadline = time.time() + 120
        while not os.path.exists(go) and time.time() < deadline:
            time.sleep(0.05)
        return x

    return (
        spark.range(20)
        .coalesce(1)
        .select(held("id").alias("id"))
        .write.format("lance")
        .mode("append")
        .save(str(path))
    )


def test_a_lost_commit_race_is_a_conflict_class_of_its_own(spark, tmp_path):
    """An append that read the dataset before pylance overwrote it cannot commit: pylance
    refuses the same (its Append over a concurrent Overwrite). In Python the error is
    spark_lance.LanceConcurrentModificationException, a PySpark CapturedException whose first
    line is the connector's message; nothing is committed."""
    import threading
    import time

    import pyarrow as pa
    from pyspark.errors.exceptions.captured import CapturedException

    import spark_lance

    path = tmp_path / "race.lance"
    spark.range(5).write.format("lance").save(str(path))
    gate = tmp_path / "gate"
    gate.mkdir()
    errors = []

    def run():
        try:
            gated_append(spark, path, gate)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.time() + 120
    while not (gate / "started").exists() and time.time() < deadline:
        time.sleep(0.05)
    assert (gate / "started").exists()
    lance.write_dataset(pa.table({"id": pa.array([7], pa.int64())}), str(path), mode="overwrite")
    (gate / "go").touch()
    t.join(180)
    assert len(errors) == 1, errors
    e = errors[0]
    assert isinstance(e, spark_lance.LanceConcurrentModificationException), type(e)
    assert not isinstance(e, spark_lance.LanceRetryableConflictException)
    assert isinstance(e, CapturedException)
    assert "oncurrent" in str(e).splitlines()[0] and str(path) in str(e).splitlines()[0], str(e)
    ds = lance.dataset(str(path))
    assert ds.to_table()["id"].to_pylist() == [7]
    ds.validate()


def test_retryable_conflicts_are_a_subclass():
    import spark_lance

    assert issubclass(
        spark_lance.LanceRetryableConflictException,
        spark_lance.LanceConcurrentModificationException,
    )
