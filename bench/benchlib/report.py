"""The report: latest.md (tables of rates and ratios, notes derived from the run itself),
latest.png (a bar chart of the scan ratios); latest.json is the run's raw document."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

from . import maintenance, rowlevel, tpch, vectors
from .queries import queries
from .spark_worker import SPARK_WRITE_FORMATS

REPO = Path(__file__).resolve().parents[2]


def machine_info() -> dict:
    def sh(c):
        try:
            return subprocess.run(
                c, shell=True, capture_output=True, text=True, timeout=30
            ).stdout.strip()
        except Exception:  # noqa: BLE001
            return ""

    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem_kb = sh("grep MemTotal /proc/meminfo | awk '{print $2}'")
    import pyspark

    try:
        import lance

        lv = lance.__version__
    except Exception:  # noqa: BLE001
        lv = "?"
    return dict(
        nproc=sh("nproc"),
        cpu=cpu,
        mem_gib=round(int(mem_kb) / 1024 / 1024, 1) if mem_kb else None,
        java=sh("java -version 2>&1 | head -1"),
        python=platform.python_version(),
        pyspark=pyspark.__version__,
        pylance=lv,
        os=platform.platform(),
        loadavg=sh("cat /proc/loadavg"),
        git=sh(f"git -C {REPO} rev-parse --short HEAD"),
    )


def ratio(a, b):
    if a and b:
        return a / b
    return None


def fmt_rate(r):
    return f"{r / 1e6:.1f}" if r else "—"


def fmt_ratio(x):
    return f"{x:.2f}" if x else "—"


def same_answer(a, b) -> bool:
    """Whether two engines' answers to a scan query agree: equal, or the same number (floating
    sums differ in their last digits with the order of addition), or the same instant (pylance
    prints a timestamp's zone). A missing answer (a `noop` write) agrees with anything."""
    if a in (None, "None") or b in (None, "None") or a == b:
        return True
    try:
        x, y = float(a), float(b)
        return abs(x - y) <= 1e-9 * max(abs(x), abs(y))
    except ValueError:
        return str(a).removesuffix("+00:00") == str(b).removesuffix("+00:00")


def other_master_tables(res, qs, master) -> list[str]:
    """The scan queries run under other Spark masters than the main one (e.g. `local[2]`), a
    table per master that ran any of them (other sections, such as TPC-H, record their own
    master too)."""
    idx = index(res)
    lines: list[str] = []
    for om in sorted({r.get("master") for r in res if r.get("master") not in (None, master)}):
        rows = []
        for q in qs:
            n = q["name"]
            pq, o22, o20 = (
                idx.get(("ours", f, n, om), {}) for f in ("parquet", "lance2.2", "lance2.0")
            )
            if not any((pq, o22, o20)):
                continue
            rp, r22, r20 = (x.get("rows_per_s") for x in (pq, o22, o20))
            rows.append(
                f"| {n} | {fmt_rate(rp)} | {fmt_rate(r22)} | {fmt_rate(r20)} | "
                f"{fmt_ratio(ratio(r22, rp))} | {fmt_ratio(ratio(r20, rp))} |"
            )
        if rows:
            lines += [
                "",
                f"### Spark master `{om}`",
                "",
                "| query | Parquet | ours 2.2 | ours 2.0 | ours2.2/Parquet | ours2.0/Parquet |",
                "|---|---|---|---|---|---|",
                *rows,
            ]
    return lines


def index(results):
    return {(r.get("engine"), r.get("format"), r.get("query"), r.get("master")): r for r in results}


def build_report(doc: dict, out: Path) -> None:
    res = doc["results"]
    idx = index(res)
    rows = doc["rows"]
    master = doc["master"]
    qs = queries(rows)
    lines = []
    m = doc["machine"]
    lines += [
        f"# spark-lance benchmark — {rows:,} rows",
        "",
        f"Run {doc['started']} (took {doc.get('elapsed_s', 0) / 60:.1f} min), git {m.get('git')}. "
        f"Spark master `{master}` unless a column says otherwise.",
        "",
        "| machine | |",
        "|---|---|",
        f"| nproc | {m['nproc']} |",
        f"| CPU | {m['cpu']} |",
        f"| memory | {m['mem_gib']} GiB |",
        f"| Java | {m['java']} |",
        f"| Spark / pylance | pyspark {m['pyspark']} / pylance {m['pylance']} |",
        f"| load average at start | {m['loadavg']} |",
        "",
    ]
    lines += ["Notes:", ""] + [f"- {n}" for n in run_notes(doc)] + ["", ""]
    scans_at = len(lines)  # the scan table is dropped again when the run had no scan query
    lines += [
        "## Scans (M rows/s, median of runs after a warm-up; higher is better)",
        "",
        "Ratios are throughput ratios: **ours ÷ other**; above 1 means this connector is faster.",
        "",
        "| query | Parquet | ours 2.2 | ours 2.0 | pylance 2.2 | lance-spark 2.2 | lance-spark 2.0 "
        "| ours2.2/Parquet | ours2.0/Parquet | ours2.2/lance-spark2.2 | ours2.0/lance-spark2.0 | ours2.2/pylance "
        "| ours 2.2 min–max s | heap peak ours2.2 / Parquet MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    # a lance-spark worker that died (a Rust panic aborts its JVM) left one error row per format
    crashed = {
        r.get("format")
        for r in res
        if r.get("engine") == "lance-spark" and r.get("error") and not r.get("query")
    }

    # An answer other than Parquet's is shown as "wrong", with no rate or ratio, and listed
    # under the table.
    wrong, wrong_ids = [], set()

    def cell(x, crash=False):
        if crash and not x:
            return "crash"
        if x.get("error"):
            return "err"
        return "wrong" if id(x) in wrong_ids else fmt_rate(x.get("rows_per_s"))

    chart = []
    for q in qs:
        n = q["name"]
        pq = idx.get(("ours", "parquet", n, master), {})
        o22 = idx.get(("ours", "lance2.2", n, master), {})
        o20 = idx.get(("ours", "lance2.0", n, master), {})
        pl = idx.get(("pylance", "lance2.2", n, None), {})
        ls22 = idx.get(("lance-spark", "lance2.2", n, master), {})
        ls20 = idx.get(("lance-spark", "lance2.0", n, master), {})
        if not any((pq, o22, o20, pl, ls22, ls20)):
            continue
        for x in (o22, o20, pl, ls22, ls20):
            if x and pq and not same_answer(x.get("result"), pq.get("result")):
                wrong_ids.add(id(x))
                wrong.append(
                    f"{x['engine']} {x['format']} `{n}` answered `{x.get('result')}` "
                    f"where Parquet answered `{pq.get('result')}`"
                )
        rp, r22, r20, rpl, rls22, rls20 = (
            None if id(x) in wrong_ids else x.get("rows_per_s")
            for x in (pq, o22, o20, pl, ls22, ls20)
        )
        rat = dict(
            parquet=ratio(r22, rp),
            parquet20=ratio(r20, rp),
            lance_spark=ratio(r22, rls22),
            lance_spark20=ratio(r20, rls20),
            pylance=ratio(r22, rpl),
        )
        chart.append((n, dict(rat, pylance=None) if n == "count_star" else rat))
        mm = f"{o22['min_s']:.2f}–{o22['max_s']:.2f}" if o22.get("min_s") is not None else "—"
        heap = " / ".join(
            f"{x['peak_heap_bytes'] / 2**20:.0f}" if x.get("peak_heap_bytes") else "—"
            for x in (o22, pq)
        )
        lines.append(
            f"| {n} | {cell(pq)} | {cell(o22)} | {cell(o20)} | {cell(pl)} | {cell(ls22, 'lance2.2' in crashed)} | "
            f"{cell(ls20, 'lance2.0' in crashed)} | {fmt_ratio(rat['parquet'])} | {fmt_ratio(rat['parquet20'])} | "
            f"{fmt_ratio(rat['lance_spark'])} | {fmt_ratio(rat['lance_spark20'])} | {fmt_ratio(rat['pylance'])} | "
            f"{mm} | {heap} |"
        )
    if not chart:
        del lines[scans_at:]
    if wrong:
        lines += ["", "Wrong answers (no rate or ratio shown): " + "; ".join(wrong) + "."]
    doc["ratios"] = {n: r for n, r in chart}
    lines += other_master_tables(res, qs, master)
    lines += write_table(res, doc.get("write_rows"))
    lines += maintenance.table(res, doc.get("compact_fragments"))
    lines += maintenance.cleanup_table(res)
    lines += rowlevel.table(res, doc.get("rowlevel_rows") or doc.get("rows"))
    lines += tpch.table(res, doc.get("tpch_sf"), doc.get("tpch_sizes"))
    lines += vectors.table(res, doc.get("vector_rows"))
    errs = [r for r in res if r.get("error")]
    if errs:
        lines += ["", "## Errors", ""]
        for r in errs:
            el = r["error"].strip().splitlines()
            # a dead JVM: what died where and the panic come first; the rest is a backtrace
            el = el[:4] if r.get("jvm_died") else el[-25:]
            lines += [
                f"- **{r.get('engine')} {r.get('section')} {r.get('format', '')} {r.get('query', '')}**:",
                "",
                "  ```",
                *("  " + x for x in el),
                "  ```",
            ]
    lines += ["", "## Queries", "", "| name | Spark SQL | what it measures |", "|---|---|---|"]
    for q in qs:
        sql = 'write.format("noop") of the whole table' if q.get("noop") else q["sql"].format(t="t")
        lines.append(f"| {q['name']} | `{sql}` | {q['what']} |")
    (out / "latest.md").write_text("\n".join(lines) + "\n")
    chart_png(chart, out / "latest.png", rows, master)


def run_notes(doc: dict) -> list[str]:
    """What a reader needs to weigh the figures, taken from the run itself."""
    m = doc["machine"]
    notes = [
        f"Rows: {doc['rows']:,} per table (scans); timed writes use the first {doc.get('write_rows') or 0:,} rows "
        "of the mixed table (see bench/README.md for why). Each figure is the median of "
        f"{doc.get('runs', 3)} timed runs after a warm-up run. Column queries interleave the formats run by run; "
        "the whole-table queries (vector_elem0, full_scan_noop, topn_latest) run each "
        "format's runs back to back, because "
        "the three mixed tables together do not fit in the page cache."
    ]
    notes.append(
        "Scan data: Lance by pylance, Parquet by pyarrow with Spark's Parquet writer settings (snappy, "
        "128 MiB row groups, 1 MiB pages of at most 20,000 rows, page indexes, INT96 timestamps); "
        "Spark's own Parquet writer is timed in the Writes section."
    )
    threads = sorted(
        {
            r["threads"]
            for r in doc["results"]
            if r.get("engine") == "pylance"
            and r.get("section") in ("pylance", "write")
            and r.get("threads")
        }
    )
    if threads:
        n = " / ".join(map(str, threads))
        s = "" if threads == [1] else "s"
        notes.append(
            f"pylance's scans and writes ran with {n} compute thread{s} and {n} I/O "
            f"thread{s} (`LANCE_CPU_THREADS`, `LANCE_IO_THREADS`), as many as "
            f"`{doc['master']}` has task slots: ours ÷ pylance compares per core."
        )
    ph = doc.get("phases_s") or {}
    if ph:
        notes.append(
            "Time per section: "
            + ", ".join(f"{k} {v / 60:.1f} min" for k, v in ph.items())
            + (
                " (data prepared in this run)"
                if ph.get("prep", 0) > 5
                else " (data already prepared)"
            )
            + "."
        )
    load0 = (m.get("loadavg") or "").split()[:3]
    peak = doc.get("load_max")
    if load0:
        busy = peak is not None and peak > 2.5
        notes.append(
            f"Load average {', '.join(load0)} at the start, {peak if peak is not None else '?'} at most "
            f"during the run, on {m.get('nproc')} cores"
            + (
                ": the box was shared with other work, so absolute rates are low and noisy; "
                "read the ratios (those of the column queries come from interleaved runs under the same "
                "load; for the whole-table queries compare min–max too)."
                if busy
                else "."
            )
        )
    ls = [
        r
        for r in doc["results"]
        if r.get("engine") == "lance-spark" and r.get("section") == "lance-spark"
    ]
    if not ls:
        notes.append("lance-spark was not run (--only or --lance-spark off).")
    elif all(r.get("error") and not r.get("coordinates") for r in ls):
        notes.append(
            "lance-spark: no figures ("
            + ls[0]["error"].splitlines()[0][:300]
            + "); its columns are empty."
        )
    else:
        c = next(r for r in ls if r.get("coordinates"))
        note = f"lance-spark: `{c['coordinates']}`"
        if c.get("spark_version") == "3.5":
            note += (
                " on pyspark 3.5 — no lance-spark bundle for Spark 4.0 / Scala 2.13 is on Maven Central, so its "
                "ratios compare connector *and* Spark version"
            )
        for r in ls:
            if r.get("error") and not r.get("query"):
                el = r["error"].splitlines()
                i = next((k for k, x in enumerate(el) if "panicked at" in x), None)
                why = (
                    " ".join(x.strip() for x in el[i : i + 2]) if i is not None else el[-1].strip()
                )
                note += f"; reading Lance {r.get('format', '')[len('lance') :]} its JVM died: {why[:300]}"
        notes.append(note + ".")
    return notes


def write_table(res: list[dict], write_rows) -> list[str]:
    idx = {(r.get("engine"), r.get("format")): r for r in res if r.get("section") == "write"}
    if not idx:  # the run had no write section
        return data_sizes(res)
    lines = [
        "",
        f"## Writes ({write_rows or 0:,} rows of the mixed table)",
        "",
        "Spark writes read the same rows through this connector from a Lance 2.2 data set; pylance writes "
        "them from the memory-mapped Arrow source. **rows/s ÷ Parquet** above 1: faster than Spark's "
        "Parquet writer; **bytes ÷ pylance** at most 1: files no larger than pylance's of the same version.",
        "",
        "| engine | format | M rows/s | median s (min–max) | MB on disk | rows/s ÷ Spark Parquet "
        "| rows/s ÷ pylance | bytes ÷ pylance | peak heap MB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    pq = idx.get(("spark", "parquet"), {})
    rows = (
        [("spark", "parquet")]
        + [("ours", f) for f in SPARK_WRITE_FORMATS if f != "parquet"]
        + [("pylance", f) for f in ("lance2.2", "lance2.1", "lance2.0")]
    )  # rows that were not run are left out
    for eng, f in rows:
        r = idx.get((eng, f))
        if not r:
            continue
        if r.get("error"):
            lines.append(f"| {eng} | {f} | err | — | — | — | — | — | — |")
            continue
        pl = idx.get(("pylance", f), {})
        vs_pq = (
            fmt_ratio(ratio(r.get("rows_per_s"), pq.get("rows_per_s"))) if eng == "ours" else "—"
        )
        vs_plr = (
            fmt_ratio(ratio(r.get("rows_per_s"), pl.get("rows_per_s"))) if eng == "ours" else "—"
        )
        vs_pl = (
            fmt_ratio(ratio(r.get("bytes_on_disk"), pl.get("bytes_on_disk")))
            if eng == "ours"
            else "—"
        )
        heap = f"{r['peak_heap_bytes'] / 2**20:.0f}" if r.get("peak_heap_bytes") else "—"
        lines.append(
            f"| {eng} | {f} | {r['rows_per_s'] / 1e6:.3f} | {r['median_s']:.2f} ({r['min_s']:.2f}–{r['max_s']:.2f}) "
            f"| {r['bytes_on_disk'] / 1e6:,.1f} | {vs_pq} | {vs_plr} | {vs_pl} | {heap} |"
        )
    return lines + data_sizes(res)


def data_sizes(res: list[dict]) -> list[str]:
    sizes = [r for r in res if r.get("section") == "prep" and r.get("bytes_on_disk")]
    if not sizes:
        return []
    return [
        "",
        "Scan data sets (made once, reused): "
        + ", ".join(
            f"{r['query'][len('size_') :]} {r['format']} {r['bytes_on_disk'] / 1e6:,.0f} MB"
            for r in sizes
        )
        + ".",
    ]


def chart_png(chart, path: Path, rows: int, master: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print(f"(no chart: matplotlib unavailable: {e})")
        return
    import numpy as np

    series = [
        ("parquet", "ours 2.2 / Parquet"),
        ("parquet20", "ours 2.0 / Parquet"),
        ("lance_spark", "ours 2.2 / lance-spark 2.2"),
        ("lance_spark20", "ours 2.0 / lance-spark 2.0"),
        ("pylance", "ours 2.2 / pylance"),
    ]
    series = [s for s in series if any(r.get(s[0]) for _, r in chart)]
    names = [n for n, _ in chart]
    x = np.arange(len(names))
    w = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(8, len(names) * 1.1), 5))
    for i, (k, label) in enumerate(series):
        vals = [r.get(k) or 0 for _, r in chart]
        ax.bar(x + (i - (len(series) - 1) / 2) * w, vals, w, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x, names, rotation=35, ha="right")
    ax.set_ylabel("throughput ratio (>1: spark-lance faster)")
    ax.set_yscale("log")
    ax.set_title(
        f"spark-lance scan throughput ratios — {rows:,} rows, {master}\n"
        "(count_star / pylance left off: pylance answers it from the manifest without a query engine)",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
