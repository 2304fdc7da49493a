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
        assert read(spark, copy, version=v).count() == lance.dataset(str(copy), version=v).count_rows()
