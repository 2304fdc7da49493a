package io.sparklance.table.txn

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LanceSchema, LogicalType}
import io.sparklance.proto.FileProtos
import io.sparklance.format.blob.BlobColumn
import io.sparklance.format.writer.{FieldEncodings, FileVersion, PackedStructs}
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{LanceDataset, RowFilter, RowMatcher, Snapshot, VersionSpec}
import io.sparklance.table.commit.NewFragment

/**
 * What a write of new rows will commit, decided before any data file is written, by the
 * rules pylance's `write_dataset` applies: an append keeps the dataset's file version and
 * schema and refuses datasets this connector cannot write (writer flags, managed blobs); a
 * create or overwrite picks the file version (requested, else the dataset's, else the
 * default) and must be able to write every column in it. The caller (the Spark layer) only
 * matches its schema to `fields` and hands back the fragments it wrote.
 *
 * @param base      the version the write read (None: no dataset yet)
 * @param template  the operation, without fragments
 * @param fields    the Lance fields the data files hold, in file column order
 * @param replacing an overwrite of the rows a filter matches (None: append or overwrite all)
 * @param addsColumns an append that first adds these top-level columns (`mergeSchema`), as
 *                    pylance's `add_columns` adds all-null ones; `fields` already hold them
 */
final case class WritePlan(
    root: String,
    base: Option[Snapshot],
    template: Operation,
    fields: Seq[LanceField],
    fileVersion: FileVersion,
    replacing: Option[RowFilter] = None,
    addsColumns: Seq[FileProtos.Field] = Nil
) {

  /** Whether blobs this write leaves out of its data files are managed objects (`_blobs/`). */
  def managedBlobs: Boolean = template match {
    case o: Overwrite => WritePlan.managedBlobs(o.schemaMetadata)
    case _ => base.exists(s => WritePlan.managedBlobs(s.schema.metadata))
  }

  /** The operation that commits `frags` (an append or overwrite; see [[replaceOn]]). */
  def operation(frags: Seq[NewFragment]): Operation = template match {
    case o: Overwrite => o.copy(fragments = frags)
    case _ => Append(frags)
  }

  /**
   * Replacing the rows `filter` matches in version `s` by `frags`: one Update (pylance's
   * REWRITE_ROWS, as `merge_insert` records inserts and deletes), the matching rows marked
   * deleted, the new rows in new fragments.
   */
  private def replaceOn(
      fileIO: FileIO,
      s: Snapshot,
      filter: RowFilter,
      frags: Seq[NewFragment]
  ): Operation =
    Update(RowMatcher.matching(fileIO, s, filter), frags.map(NewRows(_)), s.schema.fields.map(_.id))

  /**
   * Commits `frags`. An overwrite racing another overwrite is a retryable conflict in
   * pylance 14; committing the same files again on the newer version is what re-running the
   * overwrite gives, so a plain overwrite does that (a create does not: it must fail).
   */
  def commit(fileIO: FileIO, frags: Seq[NewFragment], options: CommitOptions): CommitResult = {
    val committer = new Committer(fileIO, root, options)
    if (addsColumns.nonEmpty) return commitWithNewColumns(fileIO, committer, frags)
    for (filter <- replacing; read <- base)
      // Matched again on the newer version when a concurrent writer changed those rows, as
      // pylance's update and merge_insert re-run.
      return committer.execute(read)(s => replaceOn(fileIO, s, filter, frags))
    operation(frags) match {
      case o: Overwrite if !o.mustCreate => committer.executeFrom(base)(_ => o)
      case op => committer.commit(base, op)
    }
  }

  /**
   * Two versions: the columns added (a Merge, as ALTER TABLE ADD COLUMNS and pylance's
   * `add_columns` commit it), then the rows appended on that version. The data files were
   * written with the new columns' field ids, so another writer's schema change in between is
   * a conflict; appends and deletes in between are not (the Merge is made again on them).
   */
  private def commitWithNewColumns(
      fileIO: FileIO,
      committer: Committer,
      frags: Seq[NewFragment]
  ): CommitResult = {
    val read = base.get
    val planned = Merge.addNullColumns(read, addsColumns)
    val merged = committer.execute(read) { now =>
      val m = Merge.addNullColumns(now, addsColumns)
      if (m.fields != planned.fields)
        throw LanceErrors.concurrentModification(
          root,
          read.version,
          s"version ${now.version} " +
            "changed the schema this append adds columns to; write again"
        )
      m
    }
    val after = LanceDataset.open(fileIO, root).open(VersionSpec.Number(merged.version))
    committer.commit(Some(after), Append(frags))
  }
}

object WritePlan {

  /**
   * Appending rows that carry top-level columns the dataset `s` lacks (`mergeSchema`): `added`
   * (ids from 0, pre-order) are added first, all null in the existing rows. Returns the plan,
   * whose `fields` the caller fills by matching its columns to `schemaAfter`.
   */
  def appendWithColumns(
      s: Snapshot,
      requested: Option[FileVersion],
      added: Seq[FileProtos.Field]
  ): (Seq[LanceField] => WritePlan, LanceSchema) = {
    val merge = Merge.addNullColumns(s, added)
    val after = LanceSchema.fromProto(merge.fields, s.schema.metadata, s.root)
    ((fields: Seq[LanceField]) => append(s, requested, fields).copy(addsColumns = added), after)
  }

  /** Schema metadata marking blob columns whose bytes Lance manages under `_blobs/`. */
  val ManagedBlobsKey = "lance.blob.managed"

  /** Whether a `lance.blob.managed` value turns managed blobs on, as pylance reads it. */
  def isManagedValue(v: String): Boolean = v.trim.equalsIgnoreCase("true")

  /**
   * Whether blobs written into a dataset with schema metadata `metadata` are managed: packed
   * and dedicated values become objects under `_blobs/` (Managed descriptors), not sidecars.
   */
  def managedBlobs(metadata: Map[String, Array[Byte]]): Boolean =
    metadata.get(ManagedBlobsKey).exists(v => isManagedValue(new String(v, "UTF-8")))

  /** The latest version of the dataset at `root`, None when there is none yet. */
  def existing(fileIO: FileIO, root: String): Option[Snapshot] =
    LanceDataset.latestIfAny(fileIO, root)

  /** Appending to `s` rows whose columns are the dataset fields `fields`. */
  def append(s: Snapshot, requested: Option[FileVersion], fields: Seq[LanceField]): WritePlan = {
    val root = Paths.stripTrailingSlash(s.root)
    val version = FileVersion.ofDataset(s.dataStorageVersion, root)
    requested.filter(_ != version).foreach { v =>
      throw LanceErrors.invalidOption(
        "data_storage_version",
        v.name,
        s"the dataset at $root stores version ${version.name}; appends keep the dataset's version"
      )
    }
    val op = Append(Nil)
    ManifestBuilder.checkWritable(s, op)
    validated(WritePlan(root, Some(s), op, fields, version))
  }

  /**
   * Replacing the rows of `s` that `filter` matches with new rows of `fields` (Delta's
   * `replaceWhere`, Spark's overwrite by filter): an append that also deletes, in one commit.
   * `predicate` is the condition as the user wrote it, for messages.
   */
  def replaceWhere(
      s: Snapshot,
      requested: Option[FileVersion],
      fields: Seq[LanceField],
      filter: RowFilter,
      predicate: String
  ): WritePlan = {
    filter.columns.find(c => s.schema.field(c).isEmpty).foreach { c =>
      throw LanceErrors.invalidOption(
        "replaceWhere",
        predicate,
        s"no column '$c' in ${s.root} version ${s.version}"
      )
    }
    append(s, requested, fields).copy(replacing = Some(filter))
  }

  /**
   * Creating the dataset, or replacing it (`existing`), with rows of `fields`. `mustCreate`
   * makes the commit fail if a dataset appears meanwhile (Spark's error-if-exists, ignore,
   * and appends to an empty path); `config` is set in the table config.
   */
  def replace(
      root0: String,
      existing: Option[Snapshot],
      fields: Seq[LanceField],
      requested: Option[FileVersion],
      mustCreate: Boolean,
      config: Map[String, String] = Map.empty
  ): WritePlan = {
    val root = Paths.stripTrailingSlash(root0)
    val version = replaceVersion(root, existing, requested)
    val op = Overwrite(Nil, fields, Map.empty, requested, mustCreate, config)
    existing.foreach(ManifestBuilder.checkWritable(_, op))
    validated(WritePlan(root, existing, op, fields, version))
  }

  /** The file version a create or overwrite writes: requested, the dataset's, or the default. */
  def replaceVersion(
      root: String,
      existing: Option[Snapshot],
      requested: Option[FileVersion]
  ): FileVersion = requested
    .orElse(existing.map(s => FileVersion.ofDataset(s.dataStorageVersion, root)))
    .getOrElse(FileVersion.Default)

  private def validated(p: WritePlan): WritePlan = {
    checkVersionSupports(p.fields, p.fileVersion)
    // Bad lance-encoding:* metadata fails here, on the driver, not in every task.
    FieldEncodings.validate(p.fields)
    PackedStructs.validate(p.fields, p.fileVersion)
    p
  }

  /** The kind of container `f` (a list type) is, lists of any width counting as `List`. */
  private def containerOf(f: LanceField): LogicalType =
    if (f.logicalType.isVariableList) LogicalType.List else f.logicalType

  /**
   * Maps need 2.2; blob v1 is written below 2.2 and v2 from 2.2 on: refused up front rather
   * than after the data is written.
   */
  private def checkVersionSupports(fields: Seq[LanceField], v: FileVersion): Unit = {
    // Blobs in lists need 2.2 (pylance cannot read back the blob v1 lists it writes); blobs
    // in maps and fixed-size lists are written by no Lance.
    def blobUnder(f: LanceField, under: Option[LogicalType]): Option[(LanceField, LogicalType)] =
      if (BlobColumn.isBlob(f)) under.map(t => (f, t))
      else f.children.iterator.flatMap(c =>
        blobUnder(
          c,
          if (f.logicalType.isMultiValued && !under.exists(_ != LogicalType.List))
            Some(containerOf(f))
          else under
        )
      ).toSeq.headOption
    fields.flatMap(blobUnder(_, None)).headOption.foreach {
      case (_, LogicalType.List) if v.minor >= 2 =>
      case (f, LogicalType.List) =>
        throw LanceErrors.unsupportedType(
          f.name,
          "blob",
          "blob columns inside lists need " +
            s"data_storage_version 2.2 (this write uses ${v.name}; Lance cannot read them back)"
        )
      case (f, t) =>
        throw LanceErrors.unsupportedType(
          f.name,
          "blob",
          s"blob columns inside a ${t.text} " +
            "cannot be written"
        )
    }
    fields.flatMap(_.preOrder).foreach { f =>
      BlobColumn.version(f) match {
        case Some(BlobColumn.V2) if v.minor < 2 =>
          throw LanceErrors.unsupportedType(
            f.name,
            "blob v2",
            s"lance.blob.v2 columns need data_storage_version 2.2 (this write uses ${v.name})"
          )
        case Some(BlobColumn.V1) if v.minor >= 2 =>
          throw LanceErrors.unsupportedType(
            f.name,
            "blob v1",
            s"a ${v.name} dataset with a " +
              "blob v1 column (written by an older Lance) cannot be appended to; Lance 2.2 " +
              "writes blob v2"
          )
        case _ =>
      }
    }
    fields.flatMap(_.preOrder).find(_.logicalType == LogicalType.Map).foreach { f =>
      if (v != FileVersion.V2_2)
        throw LanceErrors.unsupportedType(
          f.name,
          "map",
          s"maps need data_storage_version 2.2 (this write uses ${v.name})"
        )
    }
  }
}
