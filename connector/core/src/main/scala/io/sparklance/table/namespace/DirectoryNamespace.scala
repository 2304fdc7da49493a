package io.sparklance.table.namespace

import java.nio.charset.StandardCharsets.UTF_8

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.{DatasetLayout, DeletionVector, FragmentReader, FragmentRef, Snapshot}
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}
import io.sparklance.table.txn.{CommitOptions, Committer, Overwrite, WritePlan}

/**
 * pylance 14's directory namespace (`lance.namespace.DirectoryNamespace(root=…)`) read and
 * written by this connector: namespaces and tables are rows of the Lance table
 * `<root>/__manifest` (object ids join id parts with `$`), and tables of the root namespace
 * are also found by listing `<root>/<name>.lance` (its directory-listing fallback). A table in a
 * child namespace lives at `<root>/<8 hex digits>_<object id>`, a root table at
 * `<root>/<name>.lance`. Every change rewrites `__manifest` in one Overwrite commit, as
 * pylance does; a concurrent change makes the Overwrite conflict, and the change is
 * re-applied to the newer rows, so neither side's entries are lost.
 */
final class DirectoryNamespace(fileIO: FileIO, root0: String) {
  import DirectoryNamespace._

  val root: String = Paths.stripTrailingSlash(root0)
  private val manifestPath = Paths.join(root, ManifestTable)

  private def snapshot: Option[Snapshot] = WritePlan.existing(fileIO, manifestPath)

  /** Every row of `__manifest` (none when there is no `__manifest`). */
  def entries(): Seq[NamespaceEntry] = snapshot.map(read).getOrElse(Nil)

  private def objectId(id: Seq[String]): String = id.mkString(Delimiter)

  def namespaceExists(id: Seq[String]): Boolean =
    id.isEmpty || entries().exists(e => e.isNamespace && e.objectId == objectId(id))

  /** The child namespaces of `parent` (their last id part). */
  def listNamespaces(parent: Seq[String]): Seq[String] = {
    if (!namespaceExists(parent))
      throw LanceErrors.pathNotFound(s"namespace ${parent.mkString(".")}")
    entries().filter(e => e.isNamespace && e.id.init == parent).map(_.id.last).sorted
  }

  /** The tables of namespace `ns`: its rows, and for the root also `<root>/<name>.lance`. */
  def listTables(ns: Seq[String]): Seq[String] = {
    if (!namespaceExists(ns)) throw LanceErrors.pathNotFound(s"namespace ${ns.mkString(".")}")
    val rows = entries().filter(e => e.isTable && e.id.init == ns).map(_.id.last)
    val listed = if (ns.nonEmpty || !fileIO.isDirectory(root)) Nil
    else fileIO.list(root).filter(e => e.isDirectory && e.name.endsWith(RootSuffix))
      .filter(e => WritePlan.existing(fileIO, e.path).isDefined)
      .map(_.name.stripSuffix(RootSuffix))
    (rows ++ listed).distinct.sorted
  }

  /** Where table `id` is (absolute), if the namespace knows it. */
  def tableLocation(id: Seq[String]): Option[String] =
    entries().find(e => e.isTable && e.objectId == objectId(id)).flatMap(_.location)
      .map(l => if (l.contains(":/") || l.startsWith("/")) l else Paths.join(root, l))
      .orElse {
        if (id.size != 1) None
        else Some(Paths.join(root, id.head + RootSuffix))
          .filter(p => WritePlan.existing(fileIO, p).isDefined)
      }

  def createNamespace(id: Seq[String]): Unit = {
    require(id.nonEmpty, "the root namespace always exists")
    change { rows =>
      if (!namespaceExists(rows, id.init))
        throw LanceErrors.pathNotFound(s"namespace ${id.init.mkString(".")}")
      if (rows.exists(_.objectId == objectId(id)))
        throw LanceErrors.unsupported(s"namespace ${id.mkString(".")} already exists in $root")
      rows :+ NamespaceEntry(objectId(id), NamespaceEntry.Namespace, None)
    }
  }

  /** Drops an empty namespace. */
  def dropNamespace(id: Seq[String]): Unit = change { rows =>
    if (!namespaceExists(rows, id)) throw LanceErrors.pathNotFound(s"namespace ${id.mkString(".")}")
    if (rows.exists(e => e.id.size > id.size && e.id.take(id.size) == id))
      throw LanceErrors.unsupported(s"namespace ${id.mkString(".")} of $root is not empty")
    rows.filterNot(_.objectId == objectId(id))
  }

  /**
   * Records table `id` and returns where its dataset goes: `<root>/<name>.lance` in the root
   * namespace, `<root>/<hash>_<object id>` in a child one (pylance's layout).
   */
  def addTable(id: Seq[String]): String = {
    val location = newLocation(id)
    change { rows =>
      if (!namespaceExists(rows, id.init))
        throw LanceErrors.pathNotFound(s"namespace ${id.init.mkString(".")}")
      if (rows.exists(_.objectId == objectId(id)))
        throw LanceErrors.unsupported(s"table ${id.mkString(".")} already exists in $root")
      rows :+ NamespaceEntry(objectId(id), NamespaceEntry.Table, Some(location))
    }
    Paths.join(root, location)
  }

  /** Where a new table `id` goes, relative to the root (pylance's layout). */
  private def newLocation(id: Seq[String]): String =
    if (id.size == 1) id.head + RootSuffix else f"${rnd.nextInt()}%08x_${objectId(id)}"

  /**
   * Renames table `from` to `to` (pylance 14's directory namespace has no rename; this keeps
   * what it reads consistent): the `__manifest` row takes the new id and keeps the location.
   * A root-namespace table stored as `<root>/<name>.lance`, which a directory listing names,
   * is moved first to where [[addTable]] would put `to` (else the listing would still show
   * `from`); stores that cannot rename directories (object stores) refuse that case.
   */
  def renameTable(from: Seq[String], to: Seq[String]): Unit = {
    val source = tableLocation(from).getOrElse(
      throw LanceErrors.pathNotFound(s"table ${from.mkString(".")} in $root")
    )
    if (!namespaceExists(to.init))
      throw LanceErrors.pathNotFound(s"namespace ${to.init.mkString(".")}")
    if (tableLocation(to).isDefined || entries().exists(_.objectId == objectId(to)))
      throw LanceErrors.unsupported(s"table ${to.mkString(".")} already exists in $root")
    val moved = Some(newLocation(to)).filter(_ =>
      from.size == 1 && source == Paths.join(root, from.head + RootSuffix)
    )
    moved.foreach { loc =>
      if (!fileIO.renameDirectory(source, Paths.join(root, loc)))
        throw LanceErrors.unsupported(s"Cannot rename table ${from.mkString(".")} to " +
          s"${to.mkString(".")}: its dataset $source is named after it and would have to move " +
          s"to ${Paths.join(root, loc)}, which this store cannot do in one step (object " +
          "stores have no directory rename)")
    }
    try change { rows =>
        if (rows.exists(_.objectId == objectId(to)))
          throw LanceErrors.unsupported(s"table ${to.mkString(".")} already exists in $root")
        val row = rows.find(e => e.isTable && e.objectId == objectId(from))
        rows.filterNot(e => e.isTable && e.objectId == objectId(from)) :+
          NamespaceEntry(objectId(to), NamespaceEntry.Table, moved.orElse(row.flatMap(_.location)))
      }
    catch {
      case e: Throwable =>
        moved.foreach(loc => fileIO.renameDirectory(Paths.join(root, loc), source))
        throw e
    }
  }

  /** Forgets table `id` (its data stays); true when it was recorded. */
  def removeTable(id: Seq[String]): Boolean = {
    var found = false
    if (snapshot.isDefined) change { rows =>
      found = rows.exists(e => e.isTable && e.objectId == objectId(id))
      rows.filterNot(e => e.isTable && e.objectId == objectId(id))
    }
    found
  }

  private def namespaceExists(rows: Seq[NamespaceEntry], id: Seq[String]): Boolean =
    id.isEmpty || rows.exists(e => e.isNamespace && e.objectId == objectId(id))

  /** Rewrites `__manifest` with `f` applied to its rows; re-applied after a racing change. */
  private def change(f: Seq[NamespaceEntry] => Seq[NamespaceEntry]): Unit = {
    new Committer(fileIO, manifestPath, CommitOptions()).executeFrom(snapshot) { s =>
      val next = f(s.map(read).getOrElse(Nil))
      val fields = s.map(_.schema.fields).getOrElse(Fields)
      // A new __manifest is written in 2.2, as pylance writes it; an existing one keeps its own.
      Overwrite(
        Seq(write(next, fields)),
        fields,
        Map.empty,
        if (s.isEmpty) Some(FileVersion.V2_2) else None,
        mustCreate = s.isEmpty
      )
    }
  }

  private def read(s: Snapshot): Seq[NamespaceEntry] = {
    val fields = Seq("object_id", "object_type", "location", "metadata", "base_objects")
      .map(n =>
        s.schema.field(n).getOrElse(throw LanceErrors.corruptFile(
          s.root,
          s"a namespace __manifest without column '$n'"
        ))
      )
    s.fragments.flatMap { f =>
      val ref = FragmentRef(s.root, s, f)
      val r = new FragmentReader(
        fileIO,
        ref,
        fields,
        DeletionVector.read(fileIO, ref),
        0,
        ref.physicalRows
      )
      try {
        val (arrays, n) = r.next(ref.physicalRows.toInt)
        if (n == 0) Nil
        else {
          val Seq(ids, types, locs, meta) = arrays.take(4).toSeq.map(strings)
          val bases = lists(arrays(4))
          (0 until n).map(i => NamespaceEntry(ids(i).get, types(i).get, locs(i), meta(i), bases(i)))
        }
      } finally r.close()
    }
  }

  private def strings(a: ColumnArray): IndexedSeq[Option[String]] =
    ColumnArrays.materialize(a) match {
      case v: VarBinaryArray => (0 until v.length).map { i =>
          if (v.isNull(i)) None
          else Some(new String(v.data, v.offsets(i), v.offsets(i + 1) - v.offsets(i), UTF_8))
        }
      case n: NullArray => IndexedSeq.fill(n.length)(None)
      case other => throw new IllegalStateException(s"not a string column: $other")
    }

  private def lists(a: ColumnArray): IndexedSeq[Option[Seq[String]]] = a match {
    case l: ListArray =>
      val items = strings(l.child)
      (0 until l.length).map { i =>
        if (l.isNull(i)) None else Some((l.offsets(i) until l.offsets(i + 1)).flatMap(items(_)))
      }
    case n: NullArray => IndexedSeq.fill(n.length)(None)
    case other => throw new IllegalStateException(s"not a list column: $other")
  }

  /** A data file of `rows` under `__manifest/data`. */
  private def write(rows: Seq[NamespaceEntry], fields: Seq[LanceField]): NewFragment = {
    def utf8(vs: Seq[Option[String]]): VarBinaryArray = {
      val bytes = vs.map(_.map(_.getBytes(UTF_8)).getOrElse(Array.emptyByteArray))
      val nulls = vs.map(_.isEmpty).toArray
      new VarBinaryArray(
        vs.size,
        if (nulls.contains(true)) nulls else null,
        bytes.scanLeft(0)(_ + _.length).toArray,
        bytes.flatten.toArray
      )
    }
    val lists = rows.map(_.baseObjects)
    val items = utf8(lists.flatMap(_.getOrElse(Nil)).map(Some(_)))
    val listNulls = lists.map(_.isEmpty).toArray
    val base = new ListArray(
      rows.size,
      if (listNulls.contains(true)) listNulls else null,
      lists.map(_.map(_.size).getOrElse(0)).scanLeft(0)(_ + _).toArray,
      items
    )
    val byName: Map[String, ColumnArray] = Map(
      "object_id" -> utf8(rows.map(r => Some(r.objectId))),
      "object_type" -> utf8(rows.map(r => Some(r.objectType))),
      "location" -> utf8(rows.map(_.location)),
      "metadata" -> utf8(rows.map(_.metadata)),
      "base_objects" -> base
    )
    val name = DataFileNames.next()
    val dir = DatasetLayout.dataDir(manifestPath)
    val version = snapshot.map(s => FileVersion.ofDataset(s.dataStorageVersion, manifestPath))
      .getOrElse(FileVersion.V2_2)
    val out = new java.io.ByteArrayOutputStream()
    val w = new LanceFileWriter(new StreamSink(out), fields, version)
    val f =
      try {
        if (rows.nonEmpty) w.write(fields.map(x =>
          byName.getOrElse(x.name, new NullArray(rows.size): ColumnArray)
        ).toArray)
        w.finish()
      } finally w.close()
    fileIO.write(Paths.join(dir, name), out.toByteArray)
    NewFragment(NewDataFile(
      name,
      f.fieldIds,
      f.columnIndices,
      version.major,
      version.minor,
      f.sizeBytes,
      f.numRows
    ))
  }
}

object DirectoryNamespace {
  val ManifestTable = "__manifest"
  val Delimiter = "$"
  val RootSuffix = ".lance"
  private val rnd = new java.security.SecureRandom()

  /** `__manifest`'s schema as pylance 14 creates it (object_id is the primary key). */
  val Fields: Seq[LanceField] = Seq(
    LanceField(
      0,
      -1,
      "object_id",
      LogicalType.Utf8,
      nullable = false,
      Map("lance-schema:unenforced-primary-key:position" -> "0".getBytes(UTF_8)),
      Nil
    ),
    LanceField(1, -1, "object_type", LogicalType.Utf8, nullable = false, Map.empty, Nil),
    LanceField(2, -1, "location", LogicalType.Utf8, nullable = true, Map.empty, Nil),
    LanceField(3, -1, "metadata", LogicalType.Utf8, nullable = true, Map.empty, Nil),
    LanceField(
      4,
      -1,
      "base_objects",
      LogicalType.List,
      nullable = true,
      Map.empty,
      Seq(LanceField(5, 4, "object_id", LogicalType.Utf8, nullable = true, Map.empty, Nil))
    )
  )
}
