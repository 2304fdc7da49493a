"""The queries every engine answers. `table` is "mixed" or "wide"; `sql` uses {t} for the view
name; `whole_table` queries read (nearly) all of the table's bytes (the runner orders their
runs for the page cache); `noop` queries write the whole projection to Spark's noop sink
instead of collecting a result; `pl` says how pylance answers the same question: (columns, filter, reducer)."""

from __future__ import annotations


def range_bounds(rows: int) -> tuple[int, int]:
    lo = rows // 2
    return lo, lo + max(1, rows // 1000)


def queries(rows: int) -> list[dict]:
    lo, hi = range_bounds(rows)
    return [
        dict(
            name="sum_int",
            table="mixed",
            sql="SELECT sum(i32) FROM {t}",
            what="sum of a random int32 column",
            pl=(["i32"], None, "sum"),
        ),
        dict(
            name="sum_bigint",
            table="mixed",
            sql="SELECT sum(i64) FROM {t}",
            what="sum of a random int64 column (values in ±2^39, so sums of 10M rows fit)",
            pl=(["i64"], None, "sum"),
        ),
        dict(
            name="sum_double",
            table="mixed",
            sql="SELECT sum(f64) FROM {t}",
            what="sum of a random float64 column",
            pl=(["f64"], None, "sum"),
        ),
        dict(
            name="sum_strlen_high",
            table="mixed",
            sql="SELECT sum(length(s_high)) FROM {t}",
            what="sum(length()) of a high-cardinality string column (1-19 chars, ~all distinct)",
            pl=(["s_high"], None, "strlen"),
        ),
        dict(
            name="sum_strlen_low",
            table="mixed",
            sql="SELECT sum(length(s_low)) FROM {t}",
            what="sum(length()) of a low-cardinality string column (12 distinct values)",
            pl=(["s_low"], None, "strlen"),
        ),
        dict(
            name="sum_nullable",
            table="mixed",
            sql="SELECT sum(opt_i64) FROM {t}",
            what="sum of an int64 column with 25% nulls",
            pl=(["opt_i64"], None, "sum"),
        ),
        dict(
            name="max_ts",
            table="mixed",
            sql="SELECT max(ts) FROM {t}",
            what="max of a timestamp column",
            pl=(["ts"], None, "max"),
        ),
        dict(
            name="vector_elem0",
            table="mixed",
            whole_table=True,
            sql="SELECT sum(vec[0]) FROM {t}",
            what="sum of element 0 of a 128 x float32 fixed-size-list column (reads the whole vector)",
            pl=(["vec"], None, "vec0"),
        ),
        dict(
            name="full_scan_noop",
            table="mixed",
            noop=True,
            whole_table=True,
            sql="{t}",
            what="every column of every row into Spark's noop sink",
            pl=(None, None, "none"),
        ),
        dict(
            name="topn_latest",
            table="mixed",
            whole_table=True,
            sql="SELECT * FROM {t} ORDER BY ts DESC LIMIT 10",
            what="the 10 latest rows, every column (a TopN: Parquet reads every row's columns)",
            pl=(None, None, "topn:ts:desc:10"),
        ),
        dict(
            name="wide_one_of_20",
            table="wide",
            sql="SELECT sum(c07) FROM {t}",
            what="one float64 column of a 20-column table",
            pl=(["c07"], None, "sum"),
        ),
        dict(
            name="count_star",
            table="mixed",
            sql="SELECT count(*) FROM {t}",
            what="count(*) (metadata for Lance and Parquet)",
            pl=(None, None, "count"),
        ),
        dict(
            name="filter_mod",
            table="mixed",
            sql="SELECT count(*) FROM {t} WHERE id % 1000 = 0",
            what="count of a 0.1% selective predicate no statistics can prune (id % 1000 = 0)",
            pl=(["id"], "id % 1000 = 0", "count"),
        ),
        dict(
            name="filter_range",
            table="mixed",
            sql=f"SELECT count(*) FROM {{t}} WHERE id >= {lo} AND id < {hi}",
            what="count of a 0.1% range predicate on the sorted id column (Parquet prunes row groups by min/max)",
            pl=(["id"], f"id >= {lo} AND id < {hi}", "count"),
        ),
    ]
