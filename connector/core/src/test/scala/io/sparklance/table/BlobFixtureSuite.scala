package io.sparklance.table

import java.nio.file.{Files, Path}
import java.security.MessageDigest

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.format.blob.BlobColumn
import io.sparklance.storage.{FileIO, HadoopFileIO}
import io.sparklance.testutil.{Fixtures, RecordingFileIO}

/**
 * The blob fixtures of src-test-data/blobs (generate_blobs.py): every blob column read through
 * FragmentReader must give, row by row, the bytes pylance's `take_blobs` returned (recorded as
 * size and SHA-256), with deletions applied, across fragments and batch boundaries.
 */
object BlobFixtures {
  val names: Seq[String] = Seq("blob_v1_2.0", "blob_v1_2.1", "blob_v2_2.2", "blob_managed_2.2")
  def dir: Path = Fixtures.testData.resolve("blobs")
  def path(name: String): Path = dir.resolve(s"$name.lance")
  def expected(name: String): JsonNode = Fixtures.mapper.readTree(dir.resolve(s"$name.json").toFile)

  def sha256(b: Array[Byte]): String =
    MessageDigest.getInstance("SHA-256").digest(b).map(x => f"${x & 0xff}%02x").mkString

  /** Dotted paths of the blob columns of `fields` (structs walked). */
  def blobPaths(fields: Seq[LanceField], prefix: String = ""): Seq[String] = fields.flatMap { f =>
    if (BlobColumn.isBlob(f)) Seq(prefix + f.name)
    else if (f.logicalType == LogicalType.Struct) blobPaths(f.children, s"$prefix${f.name}.")
    else Nil
  }

  /**
   * Every live row of the latest version: its id and, per blob path, the bytes (None = null).
   * `columns` restricts the top-level fields read (id is always read).
   */
  def read(
      io: FileIO,
      root: String,
      batch: Int,
      columns: Option[Seq[String]] = None
  ): IndexedSeq[(Long, Map[String, Option[Array[Byte]]])] = {
    val snap = LanceDataset.open(io, root).open(VersionSpec.Latest)
    val fields =
      snap.schema.fields.filter(f => f.name == "id" || columns.forall(_.contains(f.name)))
    val paths = blobPaths(fields)
    val out = IndexedSeq.newBuilder[(Long, Map[String, Option[Array[Byte]]])]
    snap.fragments.foreach { f =>
      val ref = FragmentRef(root, snap, f)
      val r = new FragmentReader(io, ref, fields, DeletionVector.read(io, ref), 0, ref.physicalRows)
      try {
        while (r.remaining > 0) {
          val (arrays, kept) = r.next(math.min(batch.toLong, r.remaining).toInt)
          val byName = fields.map(_.name).zip(arrays).toMap
          val ids = byName("id").asInstanceOf[FixedWidthArray]
          var i = 0
          while (i < kept) {
            val row = i
            out += ((
              codec.LittleEndian.i64(ids.data, row * 8),
              paths.map(p => p -> value(fields, byName, p, row)).toMap
            ))
            i += 1
          }
        }
      } finally r.close()
    }
    out.result()
  }

  private def value(
      fields: Seq[LanceField],
      byName: Map[String, ColumnArray],
      path: String,
      row: Int
  ): Option[Array[Byte]] = {
    val parts = path.split('.')
    var a = byName(parts.head)
    var f = fields.find(_.name == parts.head).get
    var i = 1
    while (i < parts.length) {
      // Like take_blobs("s.b"): a null parent struct makes the blob null.
      if (a.isNull(row)) return None
      val k = f.children.indexWhere(_.name == parts(i))
      a = a.asInstanceOf[StructArray].children(k)
      f = f.children(k)
      i += 1
    }
    a match {
      case v: VarBinaryArray => if (v.isNull(row)) None
        else Some(java.util.Arrays.copyOfRange(v.data, v.offsets(row), v.offsets(row + 1)))
      case n: NullArray => None
      case other => throw new AssertionError(s"$path decoded as ${other.getClass.getSimpleName}")
    }
  }

  /** Differences between what we read and what pylance's take_blobs returned. */
  def diff(
      name: String,
      got: IndexedSeq[(Long, Map[String, Option[Array[Byte]]])],
      onlyPaths: Option[Seq[String]] = None
  ): Seq[String] = {
    val rows = expected(name).get("rows").elements().asScala.toIndexedSeq
    if (rows.size != got.size) return Seq(s"$name: ${got.size} rows, pylance ${rows.size}")
    rows.zip(got).zipWithIndex.flatMap { case ((e, (id, blobs)), r) =>
      val idDiff = if (e.get("id").asLong() != id)
        Seq(s"$name row $r: id $id, pylance ${e.get("id")}")
      else Nil
      val fieldNames =
        e.fieldNames().asScala.filter(_ != "id").toSeq.filter(p => onlyPaths.forall(_.contains(p)))
      idDiff ++ fieldNames.flatMap { p =>
        val want = e.get(p)
        (want.isNull, blobs.get(p)) match {
          case (_, None) => Seq(s"$name row $r: blob column $p not read")
          case (true, Some(None)) => Nil
          case (true, Some(Some(b))) =>
            Seq(s"$name row $r (id $id) $p: ${b.length} bytes, pylance null")
          case (false, Some(None)) =>
            Seq(s"$name row $r (id $id) $p: null, pylance ${want.get("size")} bytes")
          case (false, Some(Some(b))) =>
            if (b.length == want.get("size").asLong() && sha256(b) == want.get("sha256").asText())
              Nil
            else Seq(
              s"$name row $r (id $id) $p: ${b.length} bytes sha256 ${sha256(b).take(12)}, pylance ${want.get("size")} bytes " +
                s"${want.get("sha256").asText().take(12)} (kind ${want.get("kind")})"
            )
        }
      }
    }
  }
}

class BlobFixtureSuite extends AnyFunSuite {
  import BlobFixtures._
  private val io = HadoopFileIO.local()

  test("the fixtures cover every blob kind pylance writes without absolute paths") {
    // v1 has no kinds; v2 fixtures must hold inline, packed, dedicated and managed values.
    val kinds = names.flatMap(n =>
      expected(n).get("kinds").elements().asScala.flatMap(_.elements().asScala.map(_.asInt()))
    )
    assert(Set(0, 1, 2, 4).subsetOf(kinds.toSet), kinds)
    names.foreach(n => assert(Files.isDirectory(path(n)), n))
  }

  for (name <- names; batch <- Seq(1 << 20, 3)) {
    test(s"$name equals take_blobs (batches of $batch)") {
      val d = diff(name, read(io, path(name).toString, batch))
      assert(d.isEmpty, d.mkString("\n", "\n", ""))
    }
  }

  test("a scan without blob columns opens no blob file and reads no blob bytes") {
    names.foreach { name =>
      val rec = new RecordingFileIO()
      val rows = read(rec, path(name).toString, 1 << 20, columns = Some(Seq("id")))
      assert(rows.size == expected(name).get("rows").size())
      val blobFiles = rec.openedPaths.filter(p => p.endsWith(".blob"))
      assert(blobFiles.isEmpty, s"$name: $blobFiles")
      // Data files are read only for their tail (footer, metadata) and the id pages, not for
      // the blob bytes they hold (visible in the files holding the 1.2 MiB value).
      Files.walk(path(name)).iterator().asScala.filter(p =>
        p.toString.endsWith(".lance") && Files.isRegularFile(p)
      )
        .filter(Files.size(_) > (256 << 10)).foreach { file =>
          val read =
            rec.rangedReads.filter(_._1.endsWith("/" + file.getFileName)).map(_._3.toLong).sum
          assert(
            read < Files.size(file) / 2,
            s"$name read $read of ${Files.size(file)} bytes of $file for the id column alone"
          )
        }
    }
  }

  test("blob bytes are read with ranged reads only, never whole files") {
    names.foreach { name =>
      val rec = new RecordingFileIO()
      val d = diff(name, read(rec, path(name).toString, 1 << 20))
      assert(d.isEmpty, d.mkString("\n"))
      assert(
        rec.wholeReads.isEmpty || rec.wholeReads.asScala.forall(p =>
          !p.endsWith(".lance") && !p.endsWith(".blob")
        ),
        rec.wholeReads.asScala.mkString(", ")
      )
    }
  }

  test(
    "every sidecar file of the 2.2 fixtures is named as BlobPaths.sidecar names a data file's blob"
  ) {
    // Sidecars are <data file key>/<32 bits of the blob id, reversed>.blob beside the data file;
    // reading the fixtures above resolves every packed/dedicated row through BlobPaths.sidecar,
    // so here only the listing: each sidecar belongs to an existing data file.
    val sidecars =
      Files.walk(path("blob_v2_2.2")).iterator().asScala.filter(_.toString.endsWith(".blob")).toSeq
    assert(sidecars.nonEmpty)
    sidecars.foreach { s =>
      val key = s.getParent.getFileName.toString
      assert(Files.isRegularFile(s.getParent.resolveSibling(s"$key.lance")), s)
      val bits = s.getFileName.toString.stripSuffix(".blob")
      val id = Integer.reverse(Integer.parseUnsignedInt(bits, 2))
      assert(_root_.io.sparklance.format.blob.BlobPaths.sidecar(
        s.getParent.resolveSibling(s"$key.lance").toString,
        id
      ) == s.toString)
    }
  }
}

/** Damaged blob descriptors fail with a corrupt-file error naming file, column and page. */
class BlobCorruptionSuite extends AnyFunSuite {
  import BlobFixtures._

  test("a 2.1 blob page whose smuggled definition level is out of range") {
    val copy = io.sparklance.testutil.TempDirs.copyTree(
      path("blob_v1_2.1"),
      io.sparklance.testutil.TempDirs.create("blob-corrupt-").resolve("blob_v1_2.1.lance")
    )
    // A null row of `b` is the descriptor (position = def 1 << 16, size = 0): raise its def to 9.
    val pattern = new Array[Byte](16)
    codec.LittleEndian.putI64(pattern, 0, 1L << 16)
    val files = Files.list(copy.resolve("data")).iterator().asScala.filter(_.toString.endsWith(
      ".lance"
    )).toSeq
    val (file, at) = files.iterator.map { f =>
      val b = Files.readAllBytes(f)
      (
        f,
        b.indices.find(i =>
          i + 16 <= b.length && java.util.Arrays.equals(b, i, i + 16, pattern, 0, 16)
        ).getOrElse(-1)
      )
    }.find(_._2 >= 0).get
    val bytes = Files.readAllBytes(file)
    codec.LittleEndian.putI64(bytes, at, 9L << 16)
    Files.write(file, bytes)
    val e = intercept[io.sparklance.LanceCorruptFileException](read(
      HadoopFileIO.local(),
      copy.toString,
      1 << 20
    ))
    assert(
      e.getMessage.contains(file.getFileName.toString) && e.getMessage.contains("field 'b'") &&
        e.getMessage.contains("page") && e.getMessage.contains("definition level 9"),
      e.getMessage
    )
  }
}
