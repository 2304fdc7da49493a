package io.sparklance.format.v20

import java.io.File

import scala.jdk.CollectionConverters._

import io.sparklance.format._
import io.sparklance.storage.Paths
import io.sparklance.table.{LanceDataset, VersionSpec}

/**
 * A 2.0 file whose columns span 12 pages each (written by pylance with a tiny page cache, see
 * resources/format-v20/generate_multipage.py): scans starting mid-page, batches crossing page
 * boundaries, list offsets and items read across pages, pages of one column with different
 * encodings (all-null, some-null, dictionary, binary). Compared with pylance's rows.
 */
class V20MultipageSuite extends org.scalatest.funsuite.AnyFunSuite {
  import FixtureSupport._

  private val dir =
    new File(getClass.getResource("/format-v20/multipage_2.0.jsonl.gz").toURI).getParentFile
  private val root = new File(dir, "multipage_2.0.lance").getAbsolutePath
  private lazy val expected = readRows(new File(dir, "multipage_2.0.jsonl.gz"))
  private lazy val snap = LanceDataset.open(FixtureSupport.io, root).open(VersionSpec.Latest)

  private def openFile(): LanceFileReader = {
    val df = snap.fragments.head.getFiles(0)
    LanceFileReader.open(
      FixtureSupport.io,
      Paths.join(Paths.join(root, "data"), df.getPath),
      df.getFileMajorVersion,
      df.getFileMinorVersion,
      FileFields(
        df.getFieldsList.asScala.map(_.intValue).toArray,
        df.getColumnIndicesList.asScala.map(_.intValue).toArray
      )
    )
  }

  private def readRange(
      fields: Seq[LanceField],
      start: Long,
      end: Long,
      batch: Int
  ): Seq[ColumnArray] = {
    val r = openFile()
    try {
      val scan = r.scan(fields, start, end)
      val batches = Iterator.iterate(start)(_ + batch).takeWhile(_ < end).map(s =>
        scan.next(math.min(batch.toLong, end - s).toInt)
      ).toSeq
      fields.indices.map(i => ColumnArrays.concat(batches.map(_(i))))
    } finally r.close()
  }

  test("the fixture really has many pages per column") {
    val r = openFile().asInstanceOf[V20FileReader]
    try assert((0 until r.container.numColumns).count(c =>
        r.container.column(c).getPagesCount >= 10
      ) >= 8)
    finally r.close()
  }

  for (
    (start, end, batch) <- Seq(
      (0L, 6000L, 6000),
      (0L, 6000L, 137),
      (0L, 6000L, 1000),
      (1L, 6000L, 499),
      (2999L, 4501L, 64),
      (4999L, 5001L, 1),
      (5999L, 6000L, 1),
      (3000L, 3000L, 10)
    )
  ) {
    test(s"rows [$start, $end) in batches of $batch equal pylance's") {
      val fields = snap.schema.fields
      val cols = if (end == start) {
        val r = openFile();
        try r.scan(fields, start, end).next(0).toSeq
        finally r.close()
      } else readRange(fields, start, end, batch)
      val errs = compare(fields, cols, expected.slice(start.toInt, end.toInt))
      assert(errs.isEmpty, errs.mkString("\n", "\n", ""))
    }
  }

  test("projected and pruned fields: a struct child alone, a list alone, a field the file lacks") {
    val fields = snap.schema.fields
    val st = fields.find(_.name == "st").get
    val pruned = st.copy(children = st.children.filter(_.name == "b"))
    val li = fields.find(_.name == "li").get
    val ghost = fields.find(_.name == "i32").get.copy(id = 999, name = "ghost")
    val cols = readRange(Seq(pruned, li, ghost), 1234, 4321, 700)
    val errs = compare(
      Seq(pruned, li),
      cols.take(2),
      expected.slice(1234, 4321).map { row =>
        val o = row.deepCopy().asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
        o.get("st").asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].remove("a")
        o
      }
    )
    assert(errs.isEmpty, errs.mkString("\n", "\n", ""))
    assert(cols(2).isInstanceOf[NullArray] && cols(2).length == 4321 - 1234)
  }
}
