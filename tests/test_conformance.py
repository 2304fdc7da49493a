"""Metadata conformance: for every fixture dataset (src-test-data) and every external dataset
(src-test-data/external), at every version and every tag, Spark's view through the connector must
equal what pylance reports LIVE for the same path: schema (through the documented type mapping),
row count, tag resolution and time travel by timestamp."""

from __future__ import annotations

import datetime as dt

import lance
import pytest

import support
from lance_types import spark_schema_for_arrow, type_shape, unsupported_fields

FIXTURES = support.all_fixtures()
VERSION_CASES = [pytest.param(f, v, id=f"{f.name}@v{v}") for f in FIXTURES for v in f.versions]
TAG_CASES = [pytest.param(f, t, id=f"{f.name}#{t}") for f in FIXTURES for t in sorted(f.tags)]
DATASET_CASES = [pytest.param(f, id=f.name) for f in FIXTURES]


def read(spark, path, **options):
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def error_of(fn) -> str:
    """Run fn, which must raise; return the exception's text (for Py4J errors it holds the
    Java message)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any error type is fine, its message is checked
        return f"{type(e).__name__}: {e}"
    pytest.fail("expected an error, but the call succeeded")


def check_schema(spark, ds, df_thunk, what: str):
    """Spark's schema must be the documented mapping of pylance's Arrow schema; if some column
    has no mapping the connector must refuse to load it, naming the column."""
    bad = unsupported_fields(ds.schema)
    if bad:
        msg = error_of(lambda: df_thunk().schema)
        assert any(b in msg for b in bad), (
            f"{what}: error does not name unsupported column(s) {bad}: {msg}"
        )
        return
    expected = spark_schema_for_arrow(ds.schema)
    actual = df_thunk().schema
    exp_fields = [(f.name, type_shape(f.dataType), f.nullable) for f in expected.fields]
    act_fields = [(f.name, type_shape(f.dataType), f.nullable) for f in actual.fields]
    assert [f[0] for f in act_fields] == [f[0] for f in exp_fields], (
        f"{what}: column names/order differ"
    )
    for e, a in zip(exp_fields, act_fields):
        assert a == e, (
            f"{what}: column {e[0]!r}: expected {e[1:]} (type, nullable), Spark has {a[1:]}"
        )


# ---------------------------------------------------------------------------------------------


def test_fixtures_present():
    gen = support.generated_fixtures()
    ext = support.external_fixtures()
    assert support.EXPECTED_DIR.is_dir(), f"no fixtures: {support.EXPECTED_DIR} is missing"
    assert len(gen) >= 20, (
        f"expected the generated fixtures in {support.EXPECTED_DIR}, found {len(gen)}"
    )
    assert support.EXTERNAL_DIR.is_dir(), (
        f"external datasets missing: {support.EXTERNAL_DIR} (they are part of the repository)"
    )
    assert len(ext) >= 1, f"no expected/external/*.json in {support.EXPECTED_DIR}"
    for f in gen + ext:
        assert f.path.is_dir(), f"{f.name}: dataset directory {f.path} does not exist"
    # The demo and several tests rely on at least one multi-version dataset with tags.
    assert any(len(f.versions) > 1 and f.tags for f in gen)


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_pylance_agrees_with_recorded_history(fx):
    """The fixture's recorded versions and tags are what pylance sees now (guards the test
    parametrization itself)."""
    ds = lance.dataset(str(fx.path))
    assert tuple(sorted(v["version"] for v in ds.versions())) == fx.versions
    assert {k: v["version"] for k, v in ds.tags.list().items()} == fx.tags
    assert ds.version == fx.latest


@pytest.mark.parametrize("fx,version", VERSION_CASES)
def test_schema_at_version(spark, fx, version):
    ds = lance.dataset(str(fx.path), version=version)
    check_schema(spark, ds, lambda: read(spark, fx.path, version=version), f"{fx.name} v{version}")


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_schema_latest(spark, fx):
    ds = lance.dataset(str(fx.path))
    check_schema(spark, ds, lambda: read(spark, fx.path), f"{fx.name} latest")


@pytest.mark.parametrize("fx,version", VERSION_CASES)
def test_count_at_version(spark, fx, version):
    expected = lance.dataset(str(fx.path), version=version).count_rows()
    assert read(spark, fx.path, version=version).count() == expected


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_count_latest(spark, fx):
    expected = lance.dataset(str(fx.path)).count_rows()
    assert read(spark, fx.path).count() == expected


@pytest.mark.parametrize("fx,tag", TAG_CASES)
def test_tag(spark, fx, tag):
    ds = lance.dataset(str(fx.path), version=tag)
    tagged_version = lance.dataset(str(fx.path)).tags.list()[tag]["version"]
    assert ds.version == tagged_version
    check_schema(spark, ds, lambda: read(spark, fx.path, version=tag), f"{fx.name} tag {tag}")
    assert read(spark, fx.path, version=tag).count() == ds.count_rows()
    # Same answer as asking for the version number.
    assert (
        read(spark, fx.path, version=tag).count()
        == read(spark, fx.path, version=tagged_version).count()
    )


#: Distance kept from every commit time. pylance's asof compares against commit times it has
#: turned into float seconds (off by up to ~1 us from the manifest's nanoseconds), with a
#: strict "<", so within a microsecond of a commit its choice is an artefact of rounding.
#: The exact-boundary behaviour is tested against the manifest's own times in
#: test_metadata_tables.py.
MARGIN = dt.timedelta(microseconds=2)


def _probes(instants: dict[int, dt.datetime]):
    """Points in time around every commit: just before and just after it, half-way to the
    next one, a second before the first and a day after the last."""
    vs = sorted(instants)
    out = [(f"1s before v{vs[0]}", instants[vs[0]] - dt.timedelta(seconds=1))]
    for i, v in enumerate(vs):
        t = instants[v]
        if i > 0:
            out.append((f"2us before v{v}", t - MARGIN))
        out.append((f"2us after v{v}", t + MARGIN))
        if i + 1 < len(vs):
            out.append((f"between v{v} and v{vs[i + 1]}", t + (instants[vs[i + 1]] - t) / 2))
    out.append((f"1 day after v{vs[-1]}", instants[vs[-1]] + dt.timedelta(days=1)))
    return out


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_timestamp_selects_pylance_asof_version(spark, fx):
    """option("timestamp", iso) reads the version lance.dataset(path, asof=...) opens; where
    pylance finds no version, the connector raises an error naming the path."""
    path = str(fx.path)
    instants = support.version_instants(lance.dataset(path))
    failures = []
    for label, t in _probes(instants):
        iso = support.iso_utc(t)
        try:
            pv = lance.dataset(path, asof=support.local_naive(t))
        except ValueError:
            pv = None
        if pv is None:
            try:
                read(spark, path, timestamp=iso).count()
            except Exception as e:  # noqa: BLE001
                if path not in str(e):
                    failures.append(
                        f"{label} ({iso}): pylance has no version; Spark's error lacks the "
                        f"path: {support.short_error(e)}"
                    )
            else:
                failures.append(
                    f"{label} ({iso}): pylance has no version as of this time, Spark read one"
                )
            continue
        try:
            df = read(spark, path, timestamp=iso)
            got = (tuple(type_shape(f.dataType) for f in df.schema.fields), df.columns, df.count())
        except Exception as e:  # noqa: BLE001 - collect, report all probes together
            failures.append(
                f"{label} ({iso}): pylance opens v{pv.version}; Spark: {support.short_error(e)}"
            )
            continue
        want_schema = spark_schema_for_arrow(pv.schema)
        want = (
            tuple(type_shape(f.dataType) for f in want_schema.fields),
            want_schema.names,
            pv.count_rows(),
        )
        if got != want:
            failures.append(
                f"{label} ({iso}): pylance opens v{pv.version} ({want[2]} rows, columns {want[1]}); "
                f"Spark read {got[2]} rows, columns {got[1]}"
            )
    assert not failures, f"{fx.name}: {len(failures)} time-travel mismatch(es):\n" + "\n".join(
        failures
    )


def test_timestamp_accepts_offsets(spark):
    """The same instant written with Z, +00:00 and another offset selects the same version."""
    fx = next(f for f in FIXTURES if len(f.versions) >= 3 and not f.name.startswith("external/"))
    path = str(fx.path)
    instants = support.version_instants(lance.dataset(path))
    v = sorted(instants)[1]
    t = instants[v] + MARGIN
    expected = lance.dataset(path, asof=support.local_naive(t)).count_rows()
    z = support.iso_utc(t)
    plus0 = z[:-1] + "+00:00"
    minus5 = t.astimezone(dt.timezone(dt.timedelta(hours=-5))).isoformat(timespec="microseconds")
    for iso in (z, plus0, minus5):
        assert read(spark, path, timestamp=iso).count() == expected, iso
