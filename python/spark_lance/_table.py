"""A Lance dataset as a table object with pylance's method names: :class:`LanceTable`.

Reads are DataFrames; changes are the connector's Lance transactions, through Spark SQL on
the dataset's path (``DELETE``, ``UPDATE``, ``MERGE INTO``, ``ALTER TABLE``) or the
maintenance helpers — every change one version, as pylance's own method makes it."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _maintenance, _vectors
from ._io import read_lance

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

_CATALOG = "spark_lance_paths"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class LanceTable:
    """The Lance dataset at ``path``, as pylance's ``LanceDataset`` names its methods.

    ``options`` are storage settings (``fs.*``) for every call. :meth:`for_name` opens a table
    of a Spark catalog by its name; :meth:`for_path` is the constructor."""

    def __init__(self, spark: "SparkSession", path: str, **options: str):
        if not isinstance(path, str) or not path:
            raise ValueError(f"path must be a non-empty str, not {path!r}")
        self._spark = spark
        self.path = path.rstrip("/") or path
        #: The catalog table name it was opened by (:meth:`for_name`), else ``None``.
        self.name: Optional[str] = None
        self._options = {k: str(v) for k, v in options.items()}
        # Spark keeps a catalog as first initialized: one name per set of storage options.
        key = "|".join(f"{k}={v}" for k, v in sorted(self._options.items()))
        self._catalog = f"{_CATALOG}_{hashlib.sha1(key.encode()).hexdigest()[:10]}"
        _maintenance.register_catalog(spark, self._catalog, **self._options)

    @classmethod
    def for_path(cls, spark: "SparkSession", path: str, **options: str) -> "LanceTable":
        """The Lance dataset at ``path`` (``options``: storage settings), as
        ``LanceTable(spark, path, **options)``."""
        return cls(spark, path, **options)

    @classmethod
    def for_name(cls, spark: "SparkSession", name: str) -> "LanceTable":
        """The Lance table ``name`` of any Spark catalog (``lance.db.t`` of a
        ``LanceCatalog``, ``t`` or ``db.t`` of the session catalog as ``LanceSessionCatalog``,
        ``CREATE TABLE t USING lance``), as :meth:`for_path` on its location: the same
        methods, each on the dataset there. A ``LanceCatalog``'s options other than ``root``
        (its ``fs.*`` storage settings) come along; ``name`` is kept as :attr:`name`.

        A missing table raises Spark's ``AnalysisException`` (``TABLE_OR_VIEW_NOT_FOUND``);
        a table (or view) that is not Lance's raises ``ValueError``."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty str, not {name!r}")
        details: Dict[str, str] = {}
        detailed = False
        for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect():
            key = (r[0] or "").strip()
            if key == "# Detailed Table Information":
                detailed = True
            elif detailed and key and not key.startswith("#"):
                details.setdefault(key, r[1])
        provider, location = details.get("Provider"), details.get("Location")
        if (provider or "").strip().lower() != "lance":
            raise ValueError(f"table {name} is not a Lance table (provider: {provider})")
        if not location:
            raise ValueError(f"Lance table {name} has no location")
        table = cls(spark, location, **_catalog_options(spark, name))
        table.name = name
        return table

    def __repr__(self) -> str:
        if self.name is not None:
            return f"LanceTable.for_name({self.name!r}, path={self.path!r})"
        return f"LanceTable({self.path!r})"

    @property
    def _name(self) -> str:
        return f"{self._catalog}.{_quote(self.path)}"

    def _sql(self, statement: str) -> "DataFrame":
        return self._spark.sql(statement)

    # ---- reading ----------------------------------------------------------------------------
    def to_df(
        self, version: Union[int, str, None] = None, columns: Union[str, Sequence[str], None] = None
    ) -> "DataFrame":
        """The rows of the latest version (or ``version``: a number or a tag)."""
        return read_lance(self._spark, self.path, version=version, columns=columns, **self._options)

    def count_rows(self, filter: Optional[str] = None) -> int:  # noqa: A002 - pylance's name
        df = self.to_df()
        return (df.where(filter) if filter else df).count()

    @property
    def version(self) -> int:
        """The latest version number."""
        return int(
            _maintenance._jvm(self._spark).latestVersion(
                self._spark._jsparkSession,
                self.path,
                _maintenance._options(self._spark, self._options),
            )
        )

    @property
    def schema(self) -> "StructType":
        """The latest version's schema, as Spark types (pylance's ``schema`` in Arrow's)."""
        return self.to_df().schema

    def versions(self) -> List[Dict[str, Any]]:
        """pylance's ``versions()``: for each version ``version``, ``timestamp`` (a naive local
        datetime, as pylance gives it) and ``metadata`` (row, fragment and file counts)."""
        import datetime as _dt
        import json

        raw = _maintenance._jvm(self._spark).versions(
            self._spark._jsparkSession, self.path, _maintenance._options(self._spark, self._options)
        )

        def when(ns: int) -> "_dt.datetime":  # exactly as pylance converts it (float steps)
            return _dt.datetime.fromtimestamp(ns // 1e9) + _dt.timedelta(
                microseconds=(ns % 1e9) // 1e3
            )

        return [
            {
                "version": v["version"],
                "timestamp": when(v["timestamp_nanos"]),
                "metadata": v["metadata"],
            }
            for v in json.loads(raw)
        ]

    def config(self) -> Dict[str, str]:
        """The table config (pylance's ``ds.config()``)."""
        props = {r[0]: r[1] for r in self._sql(f"SHOW TBLPROPERTIES {self._name}").collect()}
        for k in ("provider", "location", "lance.version", "lance.data_storage_version"):
            props.pop(k, None)
        props = {k: v for k, v in props.items() if not k.startswith("lance.encoding.")}
        return props

    def nearest(
        self,
        column: str,
        q: Sequence[float],
        k: int = 10,
        metric: Optional[str] = None,
        filter: Optional[str] = None,  # noqa: A002 - pylance's name
        columns: Union[str, Sequence[str], None] = None,
        version: Union[int, str, None] = None,
        *,
        nprobes: Optional[int] = None,
        refine_factor: Optional[int] = None,
        use_index: bool = True,
    ) -> "DataFrame":
        """The ``k`` rows nearest ``q`` in the vector column ``column``, with ``_distance``,
        nearest first: pylance's ``to_table(nearest={"column": column, "q": q, "k": k,
        "metric": metric, "nprobes": nprobes, "refine_factor": refine_factor, "use_index":
        use_index})``.

        Through the table's IVF_FLAT, IVF_SQ or IVF_PQ index when it has one on ``column``
        (built by pylance, for ``metric`` or any metric when ``metric`` is None) and
        ``use_index``: the ``nprobes`` partitions nearest ``q`` (all when None; pylance's own
        default probes a budget of at least 5 to 29 partitions, growing with ``k``, so on
        larger indices give ``nprobes`` to get its answer) scored in Spark tasks from the
        index's codes, deleted rows left out; ``refine_factor`` re-ranks
        ``k * refine_factor`` candidates by exact distance. Distances are then the index's
        (approximate for SQ and PQ; squared l2 between unit vectors for a cosine index) unless
        refined or combined with the exact search pylance makes of fragments appended since
        the index was built.

        Otherwise pylance's exact search (``use_index=False``, ``prefilter=True``),
        distributed over the table's splits (see :func:`spark_lance.nearest`); ``metric``
        defaults to ``l2``.

        ``filter`` (Spark SQL) selects the rows searched before the search, as pylance's
        ``prefilter=True`` (its default, ``prefilter=False``, filters the ``k`` found and may
        return fewer)."""
        return _vectors.table_nearest(
            self._spark,
            self.path,
            self._options,
            column,
            q,
            k,
            metric,
            nprobes,
            refine_factor,
            use_index,
            columns,
            version,
            filter,
        )

    def knn_join(
        self,
        queries_df: "DataFrame",
        column: str,
        k: int = 10,
        *,
        query_column: Optional[str] = None,
        metric: Optional[str] = None,
        nprobes: Optional[int] = None,
        refine_factor: Optional[int] = None,
        use_index: bool = True,
        filter: Optional[str] = None,  # noqa: A002 - pylance's name
        columns: Union[str, Sequence[str], None] = None,
    ) -> "DataFrame":
        """For every row of ``queries_df``, the ``k`` rows :meth:`nearest` returns for its
        vector in ``query_column`` (default ``column``), found in one Spark job that reads
        each IVF partition (or each fragment, searching exactly) once for all queries: every
        column of ``queries_df``, the matched row's ``columns`` (all by default; a name
        ``queries_df`` has already gets the prefix ``match_``) and ``_distance``, ordered by
        query row, nearest first. The query rows are collected to the driver; a row with a
        null vector gets no matches."""
        from . import _knn

        return _knn.knn_join(
            self._spark,
            self.path,
            self._options,
            queries_df,
            column,
            k,
            query_column,
            metric,
            nprobes,
            refine_factor,
            use_index,
            filter,
            columns,
        )

    # ---- row changes --------------------------------------------------------------------------
    def delete(self, predicate: str) -> None:
        """pylance's ``delete(predicate)``: deletion files, no data rewritten."""
        self._sql(f"DELETE FROM {self._name} WHERE {predicate}")

    def update(
        self, updates: Dict[str, str], where: Optional[str] = None, *, mode: str = "auto"
    ) -> None:
        """pylance's ``update({"col": "sql expression"}, where=...)``.

        ``mode`` picks how the new values are written: ``"rows"`` moves the matched rows to
        new fragments (SQL ``UPDATE``, merge-on-read: deletion files where they were);
        ``"columns"`` writes the updated columns again for every row of each fragment that
        has a matched row, keeping the rows and their other columns in place (pylance's
        ``update_columns`` committed in ``rewrite_columns`` mode); ``"auto"`` (default)
        takes whichever writes fewer bytes by estimate — columns when few columns of many
        rows change, rows otherwise."""
        if not updates:
            raise ValueError("updates must name at least one column")
        if mode not in ("auto", "rows", "columns"):
            raise ValueError(f"mode must be 'auto', 'rows' or 'columns', not {mode!r}")
        if mode != "rows":
            jvm = self._spark.sparkContext._jvm
            names, exprs = list(updates.keys()), list(updates.values())
            version = jvm.io.sparklance.spark.write.ColumnRewrite.update(
                self._spark._jsparkSession,
                self.path,
                names,
                exprs,
                where,
                mode,
                _maintenance._options(self._spark, self._options),
            )
            if version >= 0 or mode == "columns":
                return
        sets = ", ".join(f"{_quote(c)} = {e}" for c, e in updates.items())
        self._sql(f"UPDATE {self._name} SET {sets}" + (f" WHERE {where}" if where else ""))

    def merge_insert(self, on: Union[str, Sequence[str], None] = None) -> "MergeInsertBuilder":
        """pylance's ``merge_insert(on)`` builder; finish with ``execute(source_df)``. Without
        ``on`` it matches on the table's primary key (:attr:`primary_key`), as pylance."""
        if on is None:
            on = self.primary_key
            if not on:
                raise ValueError(
                    f"merge_insert needs on=: the table at {self.path} has no "
                    "primary key to match on"
                )
        return MergeInsertBuilder(self, [on] if isinstance(on, str) else list(on))

    @property
    def primary_key(self) -> List[str]:
        """The table's unenforced primary key columns (empty when it has none)."""
        props = {r[0]: r[1] for r in self._sql(f"SHOW TBLPROPERTIES {self._name}").collect()}
        return [c.strip() for c in props.get("lance.primary_key", "").split(",") if c.strip()]

    def set_unenforced_primary_key(self, columns: Union[str, Sequence[str]]) -> None:
        """Makes ``columns`` (NOT NULL top-level columns of 32/64-bit integers, strings or
        binaries) the table's unenforced primary key, once: Lance does not check that keys
        are unique, but merges on the key then detect concurrent inserts of the same key.
        As ``ALTER TABLE t SET TBLPROPERTIES ('lance.primary_key' = 'a,b')``."""
        cols = [columns] if isinstance(columns, str) else list(columns)
        value = ",".join(cols).replace("'", "\\'")
        self._sql(f"ALTER TABLE {self._name} SET TBLPROPERTIES ('lance.primary_key' = '{value}')")

    # ---- schema -------------------------------------------------------------------------------
    def add_columns(
        self, columns: Union[Dict[str, str], "DataFrame"], on: Optional[str] = None, **options: str
    ) -> None:
        """New columns: ``{"name": "spark type"}`` adds nullable columns, all null (pylance's
        ``add_columns(pa.field(...))``); a DataFrame with ``on`` adds its other columns with
        their values, matched to the table's rows on ``on`` — :meth:`merge` (``options``
        too)."""
        from pyspark.sql import DataFrame

        if isinstance(columns, DataFrame):
            if not on:
                raise ValueError(
                    "adding a DataFrame's columns needs on=: the column (or "
                    "_rowaddr / _rowid) matching its rows to the table's"
                )
            self.merge(columns, on, **options)
            return
        if on is not None or options:
            raise ValueError(
                "on= and write options apply to a DataFrame of values, not to column types"
            )
        if not columns:
            raise ValueError("columns must name at least one column")
        cols = ", ".join(f"{_quote(n)} {t}" for n, t in columns.items())
        self._sql(f"ALTER TABLE {self._name} ADD COLUMNS ({cols})")

    def merge(
        self, data: "DataFrame", left_on: str, right_on: Optional[str] = None, **options: str
    ) -> None:
        """pylance's ``merge(data, left_on, right_on)``: every column of ``data`` but
        ``right_on`` (default ``left_on``) added to the table, matched to its rows on the
        column ``left_on`` (or ``_rowaddr`` / ``_rowid``) — a left join: rows ``data`` does
        not match get nulls. The existing columns are not rewritten: each fragment gets one
        new data file, written by Spark tasks, and one version commits them. A table row
        matched by several rows of ``data`` fails (pylance keeps one of them). ``options``
        are write options for the new columns, e.g. ``vector_columns="emb:768"`` to store an
        array column as a vector (``fixed_size_list``), as LanceDB's embeddings are."""
        if not isinstance(left_on, str) or not left_on:
            raise ValueError(f"left_on must name a column, not {left_on!r}")
        jvm = self._spark.sparkContext._jvm
        jvm.io.sparklance.spark.write.ColumnBackfill.addColumns(
            self._spark._jsparkSession,
            self.path,
            data._jdf,
            left_on,
            right_on,
            _maintenance._options(self._spark, {**self._options, **options}),
        )

    def drop_columns(self, columns: Iterable[str]) -> None:
        """pylance's ``drop_columns``; nested fields as ``"s.a"``."""
        names = ", ".join(".".join(_quote(p) for p in c.split(".")) for c in columns)
        self._sql(f"ALTER TABLE {self._name} DROP COLUMNS {names}")

    def alter_columns(self, *alterations: Dict[str, Any]) -> None:
        """pylance's ``alter_columns({"path": ..., "name": ..., "nullable": True,
        "data_type": ...})``; ``data_type`` is a pyarrow type or a Spark SQL type name, a
        widening pylance casts (integers to wider integers, float to double, wider
        decimals)."""
        for a in alterations:
            unknown = set(a) - {"path", "name", "nullable", "data_type"}
            if unknown or "path" not in a:
                raise ValueError(
                    f"an alteration has a path and a new name, nullable (True) "
                    f"and/or data_type; not {a!r}"
                )
            col = ".".join(_quote(p) for p in a["path"].split("."))
            if a.get("data_type") is not None:
                self._sql(
                    f"ALTER TABLE {self._name} ALTER COLUMN {col} TYPE {_sql_type(a['data_type'])}"
                )
            if a.get("nullable") is not None:
                if a["nullable"] is not True:
                    raise ValueError(f"column {a['path']!r} cannot be made non-nullable")
                self._sql(f"ALTER TABLE {self._name} ALTER COLUMN {col} DROP NOT NULL")
            if a.get("name") is not None:
                self._sql(f"ALTER TABLE {self._name} RENAME COLUMN {col} TO {_quote(a['name'])}")

    def update_config(self, values: Dict[str, str]) -> None:
        """pylance's ``update_config``."""
        props = ", ".join(f"'{_sql_str(k)}' = '{_sql_str(v)}'" for k, v in values.items())
        self._sql(f"ALTER TABLE {self._name} SET TBLPROPERTIES ({props})")

    def delete_config_keys(self, keys: Iterable[str]) -> None:
        """pylance's ``delete_config_keys``."""
        props = ", ".join(f"'{_sql_str(k)}'" for k in keys)
        self._sql(f"ALTER TABLE {self._name} UNSET TBLPROPERTIES IF EXISTS ({props})")

    # ---- indices ------------------------------------------------------------------------------
    def create_scalar_index(
        self,
        column: str,
        index_type: str = "BTREE",
        name: Optional[str] = None,
        *,
        replace: bool = True,
    ) -> None:
        """pylance's ``create_scalar_index``: a BTREE index of ``column`` (named
        ``{column}_idx`` unless ``name`` is given); ``replace`` replaces an index of that name
        in the same commit."""
        if index_type.upper() != "BTREE":
            raise ValueError(f"index_type {index_type!r} is not supported; BTREE is")
        col = ".".join(_quote(p) for p in column.split("."))
        idx = _quote(name or f"{column}_idx")
        opts = " OPTIONS ('replace' = 'true')" if replace else ""
        self._sql(f"CREATE INDEX {idx} ON {self._name} USING btree ({col}){opts}")

    def drop_index(self, name: str) -> None:
        """pylance's ``drop_index``."""
        self._sql(f"DROP INDEX {_quote(name)} ON {self._name}")

    def list_indices(self) -> List[Dict[str, Any]]:
        """pylance's ``list_indices()``: name, type, uuid, fields, version (the dataset version
        it was built on) and fragment_ids (a set)."""
        return [
            {
                "name": r.name,
                "type": r.type,
                "uuid": r.uuid,
                "fields": list(r.columns),
                "version": r.dataset_version,
                "fragment_ids": set(r.fragment_ids),
            }
            for r in self._sql(f"SELECT * FROM {self._name}.indices").collect()
        ]

    # ---- maintenance --------------------------------------------------------------------------
    def compact_files(self, **options: Any) -> Dict[str, int]:
        """pylance's ``optimize.compact_files`` (see :func:`spark_lance.compact_files`)."""
        return _maintenance.compact_files(self._spark, self.path, options=self._options, **options)

    def cleanup_old_versions(self, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        """pylance's ``cleanup_old_versions`` (see :func:`spark_lance.cleanup_old_versions`)."""
        return _maintenance.cleanup_old_versions(
            self._spark, self.path, *args, options=self._options, **kwargs
        )

    def restore(self, version: Union[int, str]) -> int:
        """pylance's ``restore`` of ``version``; returns the new version."""
        return _maintenance.restore(self._spark, self.path, version, options=self._options)

    @property
    def tags(self) -> "Tags":
        """pylance's ``tags``: ``create``, ``update``, ``delete``, ``list``."""
        return Tags(self)

    @property
    def branches(self) -> "Branches":
        """pylance's ``branches``: ``list``, ``delete``."""
        return Branches(self)

    def create_branch(
        self, branch: str, version: Union[int, str, Tuple[str, int], None] = None
    ) -> "LanceTable":
        """pylance's ``create_branch(branch, version)``: a branch made from ``version`` (a
        number or a tag of the main branch, default its latest; or ``(parent_branch,
        number)`` for a branch of a branch), as pylance makes it — its own dataset under
        ``tree/<branch>`` sharing this one's files. Returns the branch as a
        :class:`LanceTable` (read and write it as any table; ``option("branch", ...)`` on
        this path does the same)."""
        parent = None
        if isinstance(version, tuple):
            if len(version) != 2 or not isinstance(version[0], str):
                raise ValueError(f"version must be (parent_branch, number), not {version!r}")
            parent, version = version
        if version is None:
            version = self.version
        elif isinstance(version, str):
            tags = self.tags.list()
            if version not in tags:
                raise ValueError(f"no tag {version!r} in {self.path} (tags: {sorted(tags)})")
            version = tags[version]
        _maintenance._jvm(self._spark).createBranch(
            self._spark._jsparkSession,
            self.path,
            branch,
            parent,
            int(version),
            _maintenance._options(self._spark, self._options),
        )
        return LanceTable(self._spark, f"{self.path}/tree/{branch}", **self._options)


class Branches:
    def __init__(self, table: LanceTable):
        self._t = table

    def list(self) -> Dict[str, Dict[str, Any]]:
        """name -> ``parent_branch``, ``parent_version``, ``create_at``, ``manifest_size``,
        ``branch_identifier`` (pylance's ``branches.list()`` fields but ``metadata``)."""
        import json

        raw = json.loads(
            _maintenance._jvm(self._t._spark).listBranches(
                self._t._spark._jsparkSession,
                self._t.path,
                _maintenance._options(self._t._spark, self._t._options),
            )
        )
        for b in raw.values():
            b["branch_identifier"] = [tuple(p) for p in b["branch_identifier"]]
        return raw

    def delete(self, branch: str) -> None:
        """Deletes the branch: its record and its own files (those it shares stay)."""
        _maintenance._jvm(self._t._spark).deleteBranch(
            self._t._spark._jsparkSession,
            self._t.path,
            branch,
            _maintenance._options(self._t._spark, self._t._options),
        )


class Tags:
    def __init__(self, table: LanceTable):
        self._t = table

    def create(self, tag: str, version: int) -> None:
        _maintenance.create_tag(
            self._t._spark, self._t.path, tag, version, options=self._t._options
        )

    def update(self, tag: str, version: int) -> None:
        _maintenance.update_tag(
            self._t._spark, self._t.path, tag, version, options=self._t._options
        )

    def delete(self, tag: str) -> None:
        _maintenance.delete_tag(self._t._spark, self._t.path, tag, options=self._t._options)

    def list(self) -> Dict[str, int]:
        return _maintenance.list_tags(self._t._spark, self._t.path, options=self._t._options)


class MergeInsertBuilder:
    """pylance's merge_insert builder, run as one ``MERGE INTO``."""

    def __init__(self, table: LanceTable, on: List[str]):
        if not on:
            raise ValueError("merge_insert needs the key column(s) to match on")
        self._t, self._on = table, on
        self._matched: Optional[str] = None
        self._not_matched = False
        self._by_source: Optional[str] = None

    def when_matched_update_all(self, condition: Optional[str] = None) -> "MergeInsertBuilder":
        cond = f" AND ({condition})" if condition else ""
        self._matched = f"WHEN MATCHED{cond} THEN UPDATE SET *"
        return self

    def when_not_matched_insert_all(self) -> "MergeInsertBuilder":
        self._not_matched = True
        return self

    def when_not_matched_by_source_delete(self, expr: Optional[str] = None) -> "MergeInsertBuilder":
        cond = f" AND ({expr})" if expr else ""
        self._by_source = f"WHEN NOT MATCHED BY SOURCE{cond} THEN DELETE"
        return self

    def execute(self, source: "DataFrame") -> None:
        if not (self._matched or self._not_matched or self._by_source):
            raise ValueError("merge_insert needs at least one when_... clause")
        view = f"spark_lance_merge_source_{id(self)}"
        source.createOrReplaceTempView(view)
        try:
            on = " AND ".join(f"t.{_quote(c)} = s.{_quote(c)}" for c in self._on)
            clauses = [
                c
                for c in (
                    self._matched,
                    "WHEN NOT MATCHED THEN INSERT *" if self._not_matched else None,
                    self._by_source,
                )
                if c
            ]
            self._t._sql(
                f"MERGE INTO {self._t._name} t USING {view} s ON {on} " + " ".join(clauses)
            )
        finally:
            self._t._spark.catalog.dropTempView(view)


def _catalog_options(spark: "SparkSession", name: str) -> Dict[str, str]:
    """The options of the ``LanceCatalog`` that ``name`` is a table of, but ``root`` (the
    storage settings its tables are read with); none for tables of other catalogs."""
    jss = spark._jsparkSession
    parts = jss.sessionState().sqlParser().parseMultipartIdentifier(name)
    first = parts.apply(0) if parts.length() > 1 else None
    catalog = (
        first
        if first is not None
        and (first == "spark_catalog" or spark.conf.get(f"spark.sql.catalog.{first}", None))
        else spark.catalog.currentCatalog()
    )
    if spark.conf.get(f"spark.sql.catalog.{catalog}", None) != "io.sparklance.spark.LanceCatalog":
        return {}
    confs = spark.sparkContext._jvm.scala.collection.JavaConverters.mapAsJavaMapConverter(
        jss.sessionState().conf().getAllConfs()
    ).asJava()
    prefix = f"spark.sql.catalog.{catalog}."
    return {
        k[len(prefix) :]: v
        for k, v in confs.items()
        if k.startswith(prefix) and k[len(prefix) :].lower() != "root"
    }


def _sql_str(s: Any) -> str:
    return str(s).replace("\\", "\\\\").replace("'", "\\'")


def _sql_type(t: Any) -> str:
    """A Spark SQL type name for a pyarrow type (or a type name given as is)."""
    if isinstance(t, str):
        return t
    import pyarrow as pa

    names = {
        pa.int8(): "tinyint",
        pa.int16(): "smallint",
        pa.int32(): "int",
        pa.int64(): "bigint",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.string(): "string",
        pa.bool_(): "boolean",
        pa.date32(): "date",
    }
    if t in names:
        return names[t]
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    raise ValueError(
        f"data_type {t} has no Spark SQL type this table can take; give a Spark SQL type name"
    )
