"""lance-spark, the JNI connector: found on Maven Central at bench time (never a build
dependency) and run in its own Spark JVM on the same Lance data.

The bundle the issue names (`lance-spark-bundle-4.0_2.13`, Spark 4.0 / Scala 2.13) is not on
Maven Central; the only published bundle is `com.lancedb:lance-spark-bundle-3.5_2.12`. When
the 4.0 bundle is missing, the bench runs the 3.5 one on pyspark 3.5 in a separate virtualenv
(bench/.venv-lance-spark, from requirements-lance-spark.txt): a different Spark, so its ratios
are connector-plus-Spark-version ratios, and the report says so. Both Lance versions run in
one worker, 2.0 first, because a Rust panic inside the bundle (0.0.14 on Lance 2.2) aborts
the whole JVM: the worker reports it once and the 2.0 figures are kept."""

from __future__ import annotations

import glob
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .spark_worker import run_worker

MAVEN = "https://repo1.maven.org/maven2"
GROUPS = ("org.lance", "com.lancedb")
# (artifact, the Spark it needs): ours first; the 3.5 bundle only as the fallback
BUNDLES = (("lance-spark-bundle-4.0_2.13", "4.0"), ("lance-spark-bundle-3.5_2.12", "3.5"))
HERE = Path(__file__).resolve().parent.parent


def newest_release(group: str, artifact: str) -> str | None:
    url = f"{MAVEN}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    with urllib.request.urlopen(url, timeout=30) as r:
        xml = r.read().decode()
    m = re.search(r"<release>([^<]+)</release>", xml) or re.search(r"<latest>([^<]+)</latest>", xml)
    return m.group(1) if m else None


def find(log) -> tuple[str | None, str | None, str]:
    """(coordinates, Spark version they need, note on what was looked for)."""
    notes = []
    for artifact, spark in BUNDLES:
        for g in GROUPS:
            try:
                v = newest_release(g, artifact)
            except Exception as e:  # noqa: BLE001
                notes.append(f"{g}:{artifact}: {e}")
                continue
            if v:
                log(f"lance-spark: newest release {g}:{artifact}:{v} (Spark {spark})")
                return f"{g}:{artifact}:{v}", spark, "; ".join(notes)
    return None, None, "; ".join(notes)


def spark35_python(log) -> str:
    """bench/.venv-lance-spark/bin/python with pyspark 3.5, made on first use."""
    venv = HERE / ".venv-lance-spark"
    py = venv / "bin" / "python"
    if not py.exists():
        log(f"creating {venv} (pyspark 3.5 for the lance-spark 3.5 bundle)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [
                str(py),
                "-m",
                "pip",
                "install",
                "-q",
                "-r",
                str(HERE / "requirements-lance-spark.txt"),
            ],
            check=True,
        )
    return str(py)


IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="central"/>
  <resolvers><ibiblio name="central" m2compatible="true" root="https://repo1.maven.org/maven2/"/></resolvers>
</ivysettings>
"""


def ivy_retrieve(python: str, ivy_dir: Path, coords: str, *extra: str) -> None:
    """Retrieves `coords` into `ivy_dir`/jars with the Ivy that ships in `python`'s pyspark,
    from Maven Central only; `extra` are more Ivy arguments."""
    group, artifact, version = coords.split(":")
    where = "import pyspark, os; print(os.path.dirname(pyspark.__file__))"
    pyspark_dir = subprocess.run(
        [python, "-c", where], capture_output=True, text=True, check=True
    ).stdout.strip()
    ivy_jar = sorted(glob.glob(f"{pyspark_dir}/jars/ivy-*.jar"))[-1]
    ivy_dir.mkdir(parents=True, exist_ok=True)
    settings = ivy_dir / "ivysettings.xml"
    settings.write_text(IVY_SETTINGS)
    into = ivy_dir / "jars" / "[artifact]-[revision](-[classifier]).[ext]"
    subprocess.run(
        [
            "java",
            "-jar",
            ivy_jar,
            "-settings",
            str(settings),
            "-cache",
            str(ivy_dir / "cache"),
            "-dependency",
            group,
            artifact,
            version,
            *extra,
            "-types",
            "jar",
            "-retrieve",
            str(into),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def fetch_bundle(coords: str, python: str, ivy_dir: Path, log) -> Path:
    """The bundle jar alone, fetched with the Ivy that ships in pyspark (`-notransitive`, Maven
    Central only) into `ivy_dir` and reused from there. The bundle is self-contained (it shades
    lance-core with its JNI library, Arrow, Jackson, ...): `spark.jars.packages` would resolve
    its ~40 declared dependencies through Spark's chain of resolvers too, which took more than
    10 minutes on this box for ~500 MB of jars the bundle already holds."""
    _, artifact, version = coords.split(":")
    jar = ivy_dir / "jars" / f"{artifact}-{version}.jar"
    if jar.exists():
        return jar
    log(f"lance-spark: fetching {coords} (without its dependencies) into {jar.parent}")
    t0 = time.perf_counter()
    ivy_retrieve(python, ivy_dir, coords, "-notransitive")
    log(f"  {time.perf_counter() - t0:.1f}s, {jar.stat().st_size / 1e6:,.0f} MB")
    return jar


#: lance-spark with vector search (its `nearest` read option): the org.lance artifact, not a
#: bundle, so fetched with its dependencies.
VECTOR_ARTIFACT = ("org.lance", "lance-spark-3.5_2.12")


def vector_jars(args, python: str, log) -> tuple[str | None, list[Path], str]:
    """(coordinates, jars, note) of the newest lance-spark release with the `nearest` read
    option, with its dependencies (Maven Central only, Ivy from pyspark 3.5), fetched once
    into the data directory."""
    group, artifact = VECTOR_ARTIFACT
    try:
        version = newest_release(group, artifact)
    except Exception as e:  # noqa: BLE001
        return None, [], f"{group}:{artifact}: {e}"
    if not version:
        return None, [], f"{group}:{artifact}: no release"
    coords = f"{group}:{artifact}:{version}"
    into = Path(args.data) / "ivy-vectors" / version
    jars = sorted(into.glob("jars/*.jar"))
    if not jars:
        log(f"lance-spark: fetching {coords} with its dependencies into {into}")
        ivy_retrieve(python, into, coords, "-confs", "default")
        jars = sorted(into.glob("jars/*.jar"))
    return coords, jars, ""


def run_vectors(args, base_spec: dict, log) -> list[dict]:
    """lance-spark's lines of the vector benchmark (see vectors.lance_spark_vectors)."""
    python = spark35_python(log)
    try:
        coords, jars, note = vector_jars(args, python, log)
    except Exception as e:  # noqa: BLE001
        coords, jars, note = None, [], f"could not fetch: {e}"
    if not jars:
        log(f"lance-spark vectors: skipped ({note})")
        return [
            dict(
                section="vectors",
                engine="lance-spark",
                master=args.vector_master,
                error=f"lance-spark not available: {note}",
            )
        ]
    res = run_worker(
        args,
        dict(
            base_spec,
            engine="lance-spark",
            section="vectors",
            master=args.vector_master,
            jar=",".join(map(str, jars)),
            vector_rows=args.vector_rows,
        ),
        log,
        python=python,
    )
    for r in res:
        r.update(coordinates=coords, spark_version="3.5")
    return res


def run(args, base_spec: dict, log, formats=("lance2.0", "lance2.2")) -> list[dict]:
    if args.lance_spark != "auto":
        coords, spark, note = (
            args.lance_spark,
            ("3.5" if "3.5_" in args.lance_spark else "4.0"),
            "command line",
        )
    else:
        coords, spark, note = find(log)
    if coords is None:
        log(f"lance-spark: not found on Maven Central ({note}); skipped")
        return [
            dict(
                section="lance-spark",
                engine="lance-spark",
                master=args.master,
                error=f"no lance-spark bundle found on Maven Central: {note}",
            )
        ]
    python = spark35_python(log) if spark == "3.5" else None
    try:
        jar = fetch_bundle(coords, python or sys.executable, Path(args.data) / "ivy", log)
    except Exception as e:  # noqa: BLE001
        log(f"lance-spark: could not fetch {coords}: {e}")
        return [
            dict(
                section="lance-spark",
                engine="lance-spark",
                master=args.master,
                coordinates=coords,
                error=f"could not fetch {coords}: {e}",
            )
        ]
    # One worker for both versions, Lance 2.0 first: a Rust panic on Lance 2.2 data (as with
    # 0.0.14) aborts the JVM after the 2.0 figures are saved, and costs one JVM start less.
    res = run_worker(
        args,
        dict(
            base_spec,
            engine="lance-spark",
            section="lance-spark",
            master=args.master,
            jar=str(jar),
            format_groups=[[f] for f in formats],
        ),
        log,
        python=python,
    )
    for r in res:
        r.update(coordinates=coords, spark_version=spark)
    return res
