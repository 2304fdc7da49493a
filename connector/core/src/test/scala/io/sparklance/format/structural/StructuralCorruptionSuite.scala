package io.sparklance.format.structural

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.DefaultLineOnly
import io.sparklance.{LanceCorruptFileException, LanceException}
import io.sparklance.format._
import io.sparklance.table.{FragmentRef, LanceDataset, VersionSpec}

/**
 * Damaged data files must fail with LanceCorruptFileException naming the file (and, for page
 * damage, column and page): never a raw runtime exception, a hang, or silently wrong values.
 * The damage is applied to copies of real pylance files: truncation, and byte flips inside
 * every page buffer of every column.
 */
@DefaultLineOnly
class StructuralCorruptionSuite extends AnyFunSuite {
  import StructuralTestSupport.io

  private case class Target(
      file: String,
      fields: Seq[LanceField],
      ff: FileFields,
      minor: Int,
      rows: Long
  )

  private def targets(root: String): Seq[Target] = {
    val snap = LanceDataset.open(io, root).open(VersionSpec.Latest)
    val f = FragmentRef(root, snap, snap.fragments.head)
    val df = f.files.head
    Seq(Target(
      df.path,
      snap.schema.fields.filter(x => x.preOrder.exists(y => df.holds(y.id))),
      df.fileFields,
      df.minor,
      f.physicalRows
    ))
  }

  /**
   * The target narrowed to the top-level field that column `col` belongs to: a damaged page
   * can only change what its own field decodes to, so only that field is read (all of them
   * when the column names no field).
   */
  private def fieldOfColumn(t: Target, col: Int): Target = {
    val at = t.ff.columnIndices.indexOf(col)
    val id = if (at < 0) -1 else t.ff.fieldIds(at)
    val owner = t.fields.filter(_.preOrder.exists(_.id == id))
    if (owner.isEmpty) t else t.copy(fields = owner)
  }

  /** Reads everything; returns normally or throws. */
  private def readAll(bytes: Array[Byte], t: Target): Unit = {
    val tmp = Files.createTempFile("corrupt", ".lance")
    try {
      Files.write(tmp, bytes)
      val c = FileContainer.open(io.open(tmp.toString))
      val scan = StructuralFileReader.scan(c, t.fields, t.ff, t.minor, 0, t.rows)
      var done = 0L
      while (done < t.rows) {
        val k = math.min(1000L, t.rows - done).toInt; scan.next(k); done += k
      }
    } finally Files.deleteIfExists(tmp)
  }

  /** Either decodes or fails cleanly; anything else fails the test. */
  private def cleanly(what: String)(body: => Unit): Option[LanceException] =
    try { body; None }
    catch {
      case e: LanceCorruptFileException =>
        assert(e.getMessage.contains("Corrupt"), what); Some(e)
      case e: LanceException => Some(e)
      case e: Throwable => fail(s"$what: raw ${e.getClass.getName}: ${e.getMessage}", e)
    }

  private val datasets = Seq(
    _root_.io.sparklance.testutil.Fixtures("types_2.2").path.toString,
    _root_.io.sparklance.testutil.Fixtures("types_2.1").path.toString,
    StructuralFixtures.path("compression_2.2"),
    StructuralFixtures.path("long_lists_2.2"),
    StructuralFixtures.path("packed_2.2"),
    StructuralFixtures.path("long_values_2.1"),
    StructuralFixtures.path("packed_fixed_2.1"),
    StructuralFixtures.path("packed_var_2.2"),
    StructuralFixtures.path("fsl_all_null_2.2"),
    StructuralFixtures.path("fsl_struct_2.2")
  )

  for (root <- datasets; t <- targets(root)) {
    val name = Path.of(root).getFileName.toString
    test(s"$name: truncated files fail cleanly") {
      val bytes = Files.readAllBytes(Path.of(t.file))
      for (
        cut <-
          Seq(0, 10, 40, bytes.length / 3, bytes.length / 2, bytes.length - 41, bytes.length - 1)
      ) {
        val e = cleanly(s"cut at $cut")(readAll(java.util.Arrays.copyOf(bytes, cut), t))
        assert(e.isDefined, s"a file cut to $cut bytes decoded without error")
      }
    }

    test(s"$name: damaged pages fail cleanly or decode") {
      val bytes = Files.readAllBytes(Path.of(t.file))
      val c = FileContainer.open(io.open(t.file))
      val rnd = new scala.util.Random(name.hashCode)
      var failures = 0
      for (
        col <- 0 until c.numColumns; page <- c.column(col).getPagesList.asScala.take(2);
        (off, size) <- page.getBufferOffsetsList.asScala.zip(page.getBufferSizesList.asScala)
        if size > 0
      ) {
        for (_ <- 0 until 3) {
          val copy = bytes.clone()
          val at = off + rnd.nextInt(size.toInt)
          copy(at.toInt) = (copy(at.toInt) ^ (1 << rnd.nextInt(8)) ^ 0x5a).toByte
          val one = fieldOfColumn(t, col)
          if (cleanly(s"column $col byte $at")(readAll(copy, one)).isDefined) failures += 1
        }
      }
      info(s"$failures damaged copies were refused")
    }

    // (fsl_all_null's first pages hold only the rows' validity bytes of all-null items: any
    // bytes there are valid data, so there is no damage to detect)
    if (!name.startsWith("fsl_all_null")) test(s"$name: errors name the file, column and page") {
      val bytes = Files.readAllBytes(Path.of(t.file))
      val c = FileContainer.open(io.open(t.file))
      // Zero the whole first page of the first column that has a non-trivial one.
      val (col, page) = (0 until c.numColumns).iterator.flatMap(i =>
        c.column(i).getPagesList.asScala.headOption.map(i -> _)
      )
        .find(_._2.getBufferSizesList.asScala.exists(_ > 64)).get
      val copy = bytes.clone()
      page.getBufferOffsetsList.asScala.zip(page.getBufferSizesList.asScala).foreach {
        case (o, s) =>
          java.util.Arrays.fill(copy, o.toInt, (o + s).toInt, 0xff.toByte)
      }
      cleanly("zeroed page")(readAll(copy, t)) match {
        case Some(e: LanceCorruptFileException) =>
          assert(
            e.getMessage.contains(s"column $col") && e.getMessage.contains("page 0"),
            e.getMessage
          )
        case other => fail(s"expected a corrupt-file error, got $other")
      }
    }
  }
}
