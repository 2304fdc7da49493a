package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{coalesce, col, expr, lit, raise_error, when}
import org.roaringbitmap.RoaringBitmap
import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.format.LanceField
import io.sparklance.format.blob.BlobColumn
import io.sparklance.format.writer.FileVersion
import io.sparklance.spark.{LanceMetadataColumns, SchemaConverter}
import io.sparklance.storage.{RoutingFileIO, SerializableConf}
import io.sparklance.table.{LanceDataset, Snapshot, VersionSpec}
import io.sparklance.table.commit.{DataFileNames, NewDataFile}
import io.sparklance.table.txn.{ColumnUpdate, Committer}

/**
 * An UPDATE written as columns (Lance's data replacement for updates, pylance's
 * `update_columns` committed in rewrite_columns mode): every fragment holding a matched row
 * gets one new data file of the updated columns for all its physical rows — the new values
 * where the condition holds, the old ones elsewhere — and the rows stay in place with their
 * row ids and other columns. An UPDATE that changes few columns of many rows writes far less
 * this way than by moving the rows (SQL UPDATE, merge-on-read).
 *
 * `auto` chooses by estimated bytes written: moving the rows writes every column of the
 * matched rows; rewriting columns writes the updated columns of every row of the touched
 * fragments. Row widths come from the data files' sizes, split among the columns by their
 * Spark default sizes. A plan that cannot be written as columns (a nested, blob or
 * metadata column, legacy 0.1 data files) is left to the row path in `auto` and refused in
 * `columns` mode. A retryable conflict re-runs the update on the newer version, as pylance's.
 */
object ColumnRewrite {
  private val log = LoggerFactory.getLogger(getClass)
  private val AddrCol = "__lance_update_rowaddr"
  private val MatchCol = "__lance_update_matched"

  /** The update's modes: choose by bytes, or always write columns. */
  val Modes: Set[String] = Set("auto", "columns")

  /**
   * `UPDATE path SET columns(i) = exprs(i) [WHERE where]` as a column rewrite. Returns the
   * new version; -1 when `auto` chose to move the rows (the caller runs the SQL UPDATE) or
   * nothing matched.
   */
  def update(
      spark: SparkSession,
      path: String,
      columns: java.util.List[String],
      exprs: java.util.List[String],
      where: String,
      mode: String,
      options: java.util.Map[String, String]
  ): Long = {
    if (!Modes(mode))
      throw LanceErrors.invalidOption(
        "mode",
        mode,
        s"an update's mode is one of " +
          s"${Modes.toSeq.sorted.mkString(", ")} (or rows)"
      )
    val job = new ColumnJob(spark, path, options)
    val (root, opts, hadoop, io, storage) =
      (job.root, job.opts, job.hadoop, job.io, job.readOptions)
    val read = LanceDataset.open(io, root).open(VersionSpec.Latest)
    val sets = columns.asScala.zip(exprs.asScala).toSeq
    val fields = resolve(spark, read, sets.map(_._1))
    val why = unsupported(read, fields)
    if (why.nonEmpty) {
      if (mode == "auto") return -1L
      throw LanceErrors.unsupported(s"Cannot update ${sets.map(_._1).mkString(", ")} of $root " +
        s"as columns: ${why.get}")
    }
    val first = matchedPerFragment(spark, read, storage, where)
    if (first.isEmpty || (mode == "auto" && !cheaper(read, fields, first))) return -1L
    val token = DataFileNames.newToken()
    var written = Set.empty[String]
    try {
      val result = new Committer(io, root).execute(read) { s =>
        // A re-run after a retryable conflict finds the rows on the newer version.
        val matched = if (s eq read) first else matchedPerFragment(spark, s, storage, where)
        val plan = TaskPlan(
          root,
          fields,
          fields.map(sparkType),
          fields.indices.map(_ + 1),
          FileVersion.ofDataset(s.dataStorageVersion, root),
          opts.copy(maxRowsPerFile = Long.MaxValue, maxBytesPerFile = Long.MaxValue),
          new SerializableConf(hadoop),
          token,
          managedBlobs = _root_.io.sparklance.table.txn.WritePlan.managedBlobs(s.schema.metadata)
        )
        val files = writeFiles(spark, s, plan, storage, sets, fields, where, matched.keySet)
        written = files.values.map(_._1.path).toSet
        ColumnUpdate(
          files.map { case (f, (file, _)) => f -> file.toProto },
          files.map { case (f, (_, offsets)) => f -> offsets },
          fields.map(_.id)
        )
      }
      log.info(s"Updated ${fields.map(_.name).mkString(", ")} of $root as columns: version " +
        s"${result.version}, ${written.size} data file(s)")
      LanceDataWriter.sweepJob(io, root, token, keep = written)
      result.version
    } catch {
      case e: Throwable =>
        LanceDataWriter.sweepJob(io, root, token, keep = Set.empty)
        throw e
    }
  }

  /** The updated columns' fields, in schema order: top-level columns of the table. */
  private def resolve(spark: SparkSession, s: Snapshot, names: Seq[String]): Seq[LanceField] = {
    if (names.isEmpty) throw LanceErrors.invalidOption("updates", "", "name at least one column")
    val resolver = spark.sessionState.conf.resolver
    val found = names.map { n =>
      s.schema.fields.find(f => resolver(f.name, n)).getOrElse(
        throw LanceErrors.invalidOption(
          "updates",
          n,
          s"the table at ${s.root} has no " +
            s"top-level column '$n' (its columns: ${s.schema.fields.map(_.name).mkString(", ")})"
        )
      )
    }
    val twice = found.groupBy(_.id).collect { case (_, fs) if fs.size > 1 => fs.head.name }
    if (twice.nonEmpty)
      throw LanceErrors.invalidOption("updates", twice.head, "a column is set more than once")
    found.sortBy(f => s.schema.fields.indexWhere(_.id == f.id))
  }

  /** Why these columns cannot be written as columns of `s`, if they cannot. */
  private def unsupported(s: Snapshot, fields: Seq[LanceField]): Option[String] =
    if (FileVersion.parse(s.dataStorageVersion).isEmpty)
      Some(s"the table's data files are of Lance file format ${s.dataStorageVersion}, which " +
        "this connector does not write")
    else fields.collectFirst {
      case f if f.children.nonEmpty => s"'${f.name}' is nested"
      case f if f.metadata.contains(BlobColumn.BlobMetaKey) => s"'${f.name}' is a blob column"
    }

  private def sparkType(f: LanceField) = SchemaConverter.toSparkType(f)

  /** The table's column `name`, quoted (a name may hold dots or backticks). */
  private def column(name: String): Column = col("`" + name.replace("`", "``") + "`")

  /** Matched rows per fragment of `s` (only fragments with at least one). */
  private def matchedPerFragment(
      spark: SparkSession,
      s: Snapshot,
      storage: Map[String, String],
      where: String
  ): Map[Long, Long] = {
    val df = table(spark, s, storage)
    df.where(condition(where)).groupBy(col(LanceMetadataColumns.FragId.name)).count()
      .collect().map(r => r.getInt(0).toLong -> r.getLong(1)).toMap
  }

  private def table(spark: SparkSession, s: Snapshot, storage: Map[String, String]): DataFrame =
    spark.read.format("lance").options(storage).option("version", s.version.toString).load(s.root)

  private def condition(where: String): Column =
    if (where == null || where.trim.isEmpty) lit(true) else coalesce(expr(where), lit(false))

  /**
   * Whether rewriting the columns writes fewer bytes than moving the rows: the data files'
   * bytes per physical row, split among the columns by their Spark default sizes.
   */
  private def cheaper(s: Snapshot, fields: Seq[LanceField], matched: Map[Long, Long]): Boolean = {
    val frags = s.fragments
    val bytes = frags.flatMap(_.getFilesList.asScala).map(_.getFileSizeBytes).sum.toDouble
    val rows = math.max(1L, frags.map(_.getPhysicalRows).sum)
    def width(f: LanceField) = sparkType(f).defaultSize.toDouble
    val share = fields.map(width).sum / math.max(1.0, s.schema.fields.map(width).sum)
    val perRow = bytes / rows
    val touchedRows = frags.filter(f => matched.contains(f.getId)).map(_.getPhysicalRows).sum
    val asColumns = touchedRows * perRow * share
    val asRows = matched.values.sum * perRow
    log.debug(s"Update of $s: ~${asColumns.toLong} bytes as columns, ~${asRows.toLong} as rows")
    asColumns < asRows
  }

  /** The new files by fragment, with the offsets of the rows that matched. */
  private def writeFiles(
      spark: SparkSession,
      s: Snapshot,
      plan: TaskPlan,
      storage: Map[String, String],
      sets: Seq[(String, String)],
      fields: Seq[LanceField],
      where: String,
      touched: Set[Long]
  ): Map[Long, (NewDataFile, RoaringBitmap)] = {
    val resolver = spark.sessionState.conf.resolver
    val cond = condition(where)
    val values = fields.map { f =>
      val e = sets.find(x => resolver(x._1, f.name)).get._2
      val t = sparkType(f)
      val v = expr(e).cast(t)
      val checked = if (f.nullable) v
      else when(
        v.isNull,
        raise_error(lit(s"UPDATE of " +
          s"${s.root} sets NOT NULL column '${f.name}' to null"))
      ).otherwise(v)
      // Evaluated on the table's row: an expression may read any column.
      when(cond, checked).otherwise(column(f.name)).as(f.name)
    }
    // Splits big enough that no fragment is cut: each task reads whole fragments, each in
    // row order, so it writes their files without a shuffle.
    val biggest = s.fragments.filter(f => touched(f.getId)).map { f =>
      val known = f.getFilesList.asScala.map(_.getFileSizeBytes).sum
      if (known > 0) known else f.getPhysicalRows * 64L
    }.max
    val rows = table(spark, s, storage + ("split_size" -> (2 * biggest + (1L << 20)).toString))
      .where(col(LanceMetadataColumns.FragId.name).isin(touched.toSeq.map(_.toInt): _*))
      .select(col(LanceMetadataColumns.RowAddr.name).as(AddrCol) +: values :+ cond.as(MatchCol): _*)
    val rowCounts = s.fragments.map(f => f.getId -> f.getPhysicalRows).toMap
    val sc = spark.sparkContext
    sc.setJobDescription(s"Lance column update of ${s.root}")
    try {
      val matchAt = fields.size + 1
      val written = rows.queryExecution.toRdd.mapPartitions { it =>
        writePartition(plan, rowCounts, matchAt, it)
      }.collect()
      val twice = written.groupBy(_._1).collect { case (f, ws) if ws.length > 1 => f }
      if (twice.nonEmpty) {
        LanceDataWriter.deleteQuietly(
          new RoutingFileIO(plan.conf.value),
          plan.root,
          written.map(_._2).toSeq
        )
        throw new IllegalStateException(s"fragment(s) ${twice.mkString(", ")} of ${s.root} " +
          "were read by more than one task")
      }
      written.map { case (f, file, bytes) =>
        val b = new RoaringBitmap()
        b.deserialize(java.nio.ByteBuffer.wrap(bytes))
        f -> (file, b)
      }.toMap
    } finally sc.setJobDescription(null)
  }

  /** One task's fragments, each with the offsets of its matched rows (serialized). */
  private def writePartition(
      plan: TaskPlan,
      rowCounts: Map[Long, Long],
      matchAt: Int,
      rows: Iterator[InternalRow]
  ): Iterator[(Long, NewDataFile, Array[Byte])] =
    ColumnBackfill.eachFragment(plan, rows)((r: (Long, NewDataFile, Array[Byte])) => r._2) {
      (frag, ofFragment) =>
        val matched = new RoaringBitmap()
        val noted = ofFragment.map { r =>
          if (r.getBoolean(matchAt)) matched.add((r.getLong(0) & 0xffffffffL).toInt)
          r
        }
        val file = ColumnBackfill.writeFragment(
          plan,
          frag,
          rowCounts.getOrElse(frag, -1L),
          noted,
          LanceMetadataColumns.RowAddr.name
        )
        val bytes = new java.io.ByteArrayOutputStream()
        matched.serialize(new java.io.DataOutputStream(bytes))
        (frag, file, bytes.toByteArray)
    }
}
