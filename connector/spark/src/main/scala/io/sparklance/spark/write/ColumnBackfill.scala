package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.functions.{col, shiftrightunsigned}
import org.apache.spark.sql.types.{StructField, StructType}
import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LanceSchema}
import io.sparklance.format.writer.{FileVersion, SchemaProtos}
import io.sparklance.spark.LanceMetadataColumns
import io.sparklance.storage.{RoutingFileIO, SerializableConf}
import io.sparklance.table.{LanceDataset, SchemaEdits, Snapshot, VersionSpec}
import io.sparklance.table.commit.{DataFileNames, NewDataFile}
import io.sparklance.table.txn.{Committer, DataReplacement, Merge}

/**
 * Column backfill (Lance's data evolution): columns computed in Spark added to a dataset
 * without rewriting the columns it has, as pylance's `merge(data, left_on, right_on)` adds
 * them. Every fragment gets one new data file holding the new columns for each of its
 * physical rows — deleted rows and rows no source row matches get nulls — and one Merge
 * commits them, every row's last-updated version becoming the new one (as pylance records).
 *
 * The table's rows (`_rowaddr` and the key, read at the version the backfill starts from)
 * are joined to the source on the key — a data column, or `_rowaddr`/`_rowid` — then shuffled
 * by fragment and sorted by row address; each task writes the files of the fragments it got,
 * and fragments no source row matched get all-null files from a second, small job. Columns
 * the table has already — added without values (ALTER TABLE ADD COLUMNS), or filled by an
 * earlier backfill — are filled instead: the same files, committed as a DataReplacement
 * (Lance's null column population), their field ids kept. A table
 * row matched by several source rows fails the backfill: pylance keeps the last of them in
 * its input's order, which a Spark DataFrame does not have. Nothing is committed and every
 * file the job wrote is deleted when anything fails; Merge is not retried, as pylance's.
 */
object ColumnBackfill {
  private val log = LoggerFactory.getLogger(getClass)
  private val AddrCol = "__lance_backfill_rowaddr"
  private val KeyCol = "__lance_backfill_key"

  /**
   * Adds every column of `source` but `rightOn` (default: `leftOn`) to the dataset at `path`,
   * matching `source`'s `rightOn` with the dataset's `leftOn`. `options`: storage settings
   * and write options (`vector_columns`, `max_page_bytes`). Returns the new version.
   */
  def addColumns(
      spark: SparkSession,
      path: String,
      source: DataFrame,
      leftOn: String,
      rightOn: String,
      options: java.util.Map[String, String]
  ): Long = {
    val job = new ColumnJob(spark, path, options)
    val (root, opts, hadoop, io) = (job.root, job.opts, job.hadoop, job.io)
    val s = LanceDataset.open(io, root).open(VersionSpec.Latest)
    val resolver = spark.sessionState.conf.resolver
    val right = Option(rightOn).getOrElse(leftOn)
    val key = source.schema.fields.find(f => resolver(f.name, right)).getOrElse(
      throw fail(
        root,
        s"the source has no key column '$right' (its columns: " +
          s"${source.schema.fieldNames.mkString(", ")})"
      )
    )
    checkTableKey(s, leftOn)
    val columns = source.schema.fields.filterNot(_ eq key).toSeq
    if (columns.isEmpty) throw fail(root, s"the source has no column besides the key '$right'")
    val existing = s.schema.fields.map(f => f.name.toLowerCase -> f).toMap
    val filling = columns.filter(c => existing.contains(c.name.toLowerCase))
    if (filling.nonEmpty && filling.size != columns.size)
      throw fail(
        root,
        s"${filling.map(c => s"'${c.name}'").mkString(", ")} already exist and " +
          s"${columns.filterNot(filling.contains).map(c => s"'${c.name}'").mkString(", ")} do " +
          "not: add new columns and fill existing ones in separate calls"
      )
    // New columns: a Merge adds them. Existing ones (added without values, or filled by an
    // earlier backfill): a DataReplacement gives them their values.
    val (added, newFields, commitOp) =
      if (filling.isEmpty) {
        val added = StructType(columns.map(_.copy(nullable = true)))
        val (fields, newFields) = newSchema(s, opts.withVectorColumns(added))
        (
          added,
          newFields,
          (w: Map[Long, NewDataFile]) =>
            Merge(
              s.fragments.map(f =>
                f.toBuilder.addFiles(w(f.getId).toProto).build()
              ),
              fields,
              rewritesRows = true
            )
        )
      } else {
        val fields = filled(s, filling.map(c => existing(c.name.toLowerCase)))
        val byName = columns.map(c => c.name.toLowerCase -> c).toMap
        val ordered = StructType(fields.map(f => byName(f.name.toLowerCase)))
        SparkToLance.matchForAppend(root, LanceSchema(fields, Map.empty), ordered)
        (
          ordered,
          fields,
          (w: Map[Long, NewDataFile]) =>
            DataReplacement(s.fragments.map(f => f.getId -> w(f.getId).toProto))
        )
      }

    val token = DataFileNames.newToken()
    val plan = TaskPlan(
      root,
      newFields,
      added.fields.map(_.dataType).toSeq,
      added.fields.indices.map(_ + 1),
      FileVersion.ofDataset(s.dataStorageVersion, root),
      opts.copy(maxRowsPerFile = Long.MaxValue, maxBytesPerFile = Long.MaxValue),
      new SerializableConf(hadoop),
      token,
      managedBlobs = _root_.io.sparklance.table.txn.WritePlan.managedBlobs(s.schema.metadata)
    )
    val rowCounts = s.fragments.map(f => f.getId -> f.getPhysicalRows).toMap
    try {
      val written =
        writeFiles(spark, s, plan, job.readOptions, rowCounts, source, key, leftOn, added)
      val version = new Committer(io, root).commit(Some(s), commitOp(written)).version
      log.info(s"Backfilled ${added.size} column(s) into $root: version $version, " +
        s"${written.size} data file(s)")
      LanceDataWriter.sweepJob(io, root, token, keep = written.values.map(_.path).toSet)
      version
    } catch {
      case e: Throwable =>
        LanceDataWriter.sweepJob(io, root, token, keep = Set.empty)
        throw e
    }
  }

  private def fail(root: String, why: String) =
    LanceErrors.invalidSchemaChange(root, s"cannot add columns from the source: $why")

  private def checkTableKey(s: Snapshot, leftOn: String): Unit = {
    val meta = LanceMetadataColumns.byName(leftOn)
    if (meta.contains(LanceMetadataColumns.FragId) || meta.exists(_.name.startsWith("_row_")))
      throw fail(
        s.root,
        s"'$leftOn' does not identify a row; match on a key column, " +
          "_rowaddr or _rowid"
      )
    if (meta.isEmpty && !s.schema.fields.exists(_.name == leftOn))
      throw fail(
        s.root,
        s"the table has no top-level column '$leftOn' to match on (its " +
          s"columns: ${s.schema.fields.map(_.name).mkString(", ")}; or _rowaddr, _rowid)"
      )
  }

  /**
   * The existing top-level `fields` a backfill may fill, in schema order: nullable, and in
   * every fragment either held by no data file (added without values) or held by one file
   * of exactly these fields (an earlier backfill's), which the new file replaces.
   */
  private def filled(s: Snapshot, fields: Seq[LanceField]): Seq[LanceField] = {
    val ids = fields.map(_.id).sorted
    fields.filterNot(_.nullable).foreach { f =>
      throw fail(
        s.root,
        s"column '${f.name}' exists and is NOT NULL; only nullable columns " +
          "are filled (rows the source does not match get null)"
      )
    }
    fields.filterNot(_.parentId == -1).foreach(f => throw fail(s.root, s"'${f.name}' is nested"))
    s.fragments.foreach { frag =>
      val holding = frag.getFilesList.asScala.filter(_.getFieldsList.asScala
        .exists(id => ids.contains(id.intValue)))
      val fits = holding.isEmpty || (holding.size == 1 &&
        holding.head.getFieldsList.asScala.map(_.intValue) == ids)
      if (!fits)
        throw fail(
          s.root,
          s"column(s) ${fields.map(f => s"'${f.name}'").mkString(", ")} " +
            s"already exist, and fragment ${frag.getId} stores them with other columns; only " +
            "columns added without values, or filled together by an earlier backfill, can be " +
            "filled"
        )
    }
    fields.sortBy(_.id)
  }

  /** The manifest's fields with `added` appended, and the new top-level fields. */
  private def newSchema(
      s: Snapshot,
      added: StructType
  ): (Seq[io.sparklance.proto.FileProtos.Field], Seq[LanceField]) = {
    val version = FileVersion.ofDataset(s.dataStorageVersion, s.root)
    val protos = SchemaProtos.toProto(SparkToLance.fields(added, version))
    val fields = SchemaEdits(s).add(protos, SchemaEdits.firstFreeId(s.manifest))
    val names = added.fieldNames.toSet
    (fields, LanceSchema.fromProto(fields, Map.empty, s.root).fields.filter(f => names(f.name)))
  }

  /** Writes one data file per fragment; the files by fragment id. */
  private def writeFiles(
      spark: SparkSession,
      s: Snapshot,
      plan: TaskPlan,
      storage: Map[String, String],
      rowCounts: Map[Long, Long],
      source: DataFrame,
      key: StructField,
      leftOn: String,
      added: StructType
  ): Map[Long, NewDataFile] = {
    val target = spark.read.format("lance").options(storage)
      .option("version", s.version.toString).load(s.root)
      .select(col(LanceMetadataColumns.RowAddr.name).as(AddrCol), col(leftOn).as(KeyCol))
    val joined = target.join(source, target(KeyCol) === source(key.name))
      .select(target(AddrCol) +: added.fieldNames.toSeq.map(n => source(n)): _*)
      .repartition(shiftrightunsigned(col(AddrCol), 32))
      .sortWithinPartitions(AddrCol)
    val sc = spark.sparkContext
    sc.setJobDescription(s"Lance column backfill of ${s.root}")
    try {
      val matched = joined.queryExecution.toRdd
        .mapPartitions(rows => writePartition(plan, rowCounts, leftOn, rows)).collect().toMap
      val missing = rowCounts.keys.filterNot(matched.contains).toSeq.sorted
      val nulls = if (missing.isEmpty) Map.empty[Long, NewDataFile]
      else {
        sc.parallelize(missing, math.max(1, math.min(missing.size, sc.defaultParallelism)))
          .mapPartitions(ids =>
            ids.map(id => id -> writeFragment(plan, id, rowCounts(id), Iterator.empty, leftOn))
          ).collect().toMap
      }
      matched ++ nulls
    } finally sc.setJobDescription(null)
  }

  /** One task's fragments: rows (row address first, then the new columns) sorted by address. */
  private def writePartition(
      plan: TaskPlan,
      rowCounts: Map[Long, Long],
      leftOn: String,
      rows: Iterator[InternalRow]
  ): Iterator[(Long, NewDataFile)] =
    eachFragment(plan, rows)((out: (Long, NewDataFile)) => out._2) { (frag, ofFragment) =>
      frag -> writeFragment(plan, frag, rowCounts.getOrElse(frag, -1L), ofFragment, leftOn)
    }

  /**
   * `write` of each fragment's run of `rows` (sorted by row address, the first column), in
   * order; when one fails, the files of the ones before it (`file` of each result) are deleted.
   */
  private[write] def eachFragment[T](plan: TaskPlan, rows: Iterator[InternalRow])(
      file: T => NewDataFile
  )(write: (Long, Iterator[InternalRow]) => T): Iterator[T] = {
    val out = scala.collection.mutable.ArrayBuffer[T]()
    val pending = rows.buffered
    try {
      while (pending.hasNext) {
        val frag = pending.head.getLong(0) >>> 32
        out += write(
          frag,
          new Iterator[InternalRow] {
            def hasNext: Boolean = pending.hasNext && (pending.head.getLong(0) >>> 32) == frag
            def next(): InternalRow = pending.next()
          }
        )
      }
    } catch {
      case e: Throwable =>
        LanceDataWriter.deleteQuietly(
          new RoutingFileIO(plan.conf.value),
          plan.root,
          out.map(file).toSeq
        )
        throw e
    }
    out.iterator
  }

  /**
   * The new columns of fragment `frag` (`physicalRows` rows) as one data file: `rows` (sorted
   * by address) at their offsets, nulls between them and after the last.
   */
  private[write] def writeFragment(
      plan: TaskPlan,
      frag: Long,
      physicalRows: Long,
      rows: Iterator[InternalRow],
      leftOn: String
  ): NewDataFile = {
    if (physicalRows < 0)
      throw new IllegalStateException(s"fragment $frag is not in the version backfilled")
    val w = new LanceDataWriter(plan)
    val nullRow = new GenericInternalRow(plan.fields.size + 1)
    var next = 0L
    try {
      rows.foreach { r =>
        val offset = r.getLong(0) & 0xffffffffL
        if (offset < next)
          throw fail(
            plan.root,
            s"several source rows match the table's row at address " +
              s"${r.getLong(0)} (fragment $frag, offset $offset); the key '$leftOn' must match " +
              "each row at most once"
          )
        while (next < offset) { w.write(nullRow); next += 1 }
        w.write(r)
        next += 1
      }
      while (next < physicalRows) { w.write(nullRow); next += 1 }
      w.commit() match {
        case LanceTaskCommit(Seq(file), _) => file
        case other => throw new IllegalStateException(s"fragment $frag: wrote $other")
      }
    } catch {
      case e: Throwable => w.abort(); throw e
    } finally w.close()
  }
}
