package io.sparklance.format

import java.io.File
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.sparklance.{LanceCorruptFileException, LanceUnsupportedException}
import io.sparklance.format.v20.FixtureSupport
import io.sparklance.storage.Paths
import _root_.io.sparklance.proto.File2Protos
import io.sparklance.table.{LanceDataset, VersionSpec}

/**
 * Version dispatch of [[LanceFileReader.open]] and clean errors on damaged files: every damage
 * must surface as a LanceCorruptFileException naming the file (and, for page damage, the
 * column and page), never as a raw runtime exception or wrong values.
 */
class LanceFileReaderSuite extends org.scalatest.funsuite.AnyFunSuite {
  import FixtureSupport._

  private val tmp = Files.createTempDirectory("lance-format-suite").toFile

  /** (path, DataFile, schema fields) of the first data file of a fixture dataset's latest version. */
  private def firstFile(dataset: String) = {
    val root = new File(testData, s"datasets/$dataset.lance").getAbsolutePath
    val snap = LanceDataset.open(io, root).open(VersionSpec.Latest)
    val df = snap.fragments.head.getFiles(0)
    (Paths.join(Paths.join(root, "data"), df.getPath), df, snap.schema.fields)
  }

  private def fileFields(df: _root_.io.sparklance.proto.TableProtos.DataFile) =
    FileFields(
      df.getFieldsList.asScala.map(_.intValue).toArray,
      df.getColumnIndicesList.asScala.map(_.intValue).toArray
    )

  private def readAll(
      path: String,
      df: _root_.io.sparklance.proto.TableProtos.DataFile,
      fields: Seq[LanceField],
      major: Int = -1,
      minor: Int = -1
  ): Seq[ColumnArray] = {
    val r = LanceFileReader.open(
      io,
      path,
      if (major < 0) df.getFileMajorVersion else major,
      if (minor < 0) df.getFileMinorVersion else minor,
      fileFields(df)
    )
    try r.scan(fields, 0, r.numRows).next(r.numRows.toInt).toSeq
    finally r.close()
  }

  private def copyWith(path: String, name: String)(f: Array[Byte] => Array[Byte]): String = {
    val out = new File(tmp, name)
    Files.write(
      out.toPath,
      f(Files.readAllBytes(new File(new java.net.URI(path).getPath match {
        case null => path; case p => p
      }).toPath))
    )
    out.getAbsolutePath
  }

  private def local(p: String): String =
    if (p.startsWith("file:")) new java.net.URI(p).getPath else p

  private def bytesOf(path: String) = Files.readAllBytes(new File(local(path)).toPath)

  private def write(name: String, bytes: Array[Byte]): String = {
    val out = new File(tmp, name); Files.write(out.toPath, bytes); out.getAbsolutePath
  }

  private def expectCorrupt(
      path: String,
      mentions: String*
  )(body: => Any): LanceCorruptFileException = {
    val e = intercept[LanceCorruptFileException](body)
    assert(e.getMessage.contains(new File(local(path)).getName), e.getMessage)
    mentions.foreach(m => assert(e.getMessage.contains(m), s"'$m' not in: ${e.getMessage}"))
    e
  }

  /**
   * Rebuilds a v2 file with column `col`'s metadata replaced: appends the new metadata and a
   * new offset table after the old contents, then copies the global buffer table and footer.
   */
  private def withColumnMetadata(
      bytes: Array[Byte],
      col: Int
  )(f: File2Protos.ColumnMetadata => File2Protos.ColumnMetadata): Array[Byte] = {
    val le = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val n = bytes.length
    val cmoStart = le.getLong(n - 32).toInt
    val gboStart = le.getLong(n - 24)
    val numGbo = le.getInt(n - 16)
    val numCols = le.getInt(n - 12)
    val metas = (0 until numCols).map { c =>
      val pos = le.getLong(cmoStart + 16 * c).toInt;
      val len = le.getLong(cmoStart + 16 * c + 8).toInt
      java.util.Arrays.copyOfRange(bytes, pos, pos + len)
    }
    val body = java.util.Arrays.copyOf(bytes, n - 40)
    val replaced =
      metas.updated(col, f(File2Protos.ColumnMetadata.parseFrom(metas(col))).toByteArray)
    val out = new java.io.ByteArrayOutputStream()
    out.write(body)
    val positions = replaced.map { m =>
      val p = out.size.toLong; out.write(m); (p, m.length.toLong)
    }
    val newCmo = out.size.toLong
    val t = ByteBuffer.allocate(16 * numCols).order(ByteOrder.LITTLE_ENDIAN)
    positions.foreach { case (p, l) => t.putLong(p); t.putLong(l) }
    out.write(t.array())
    val newGbo = out.size.toLong
    out.write(java.util.Arrays.copyOfRange(bytes, gboStart.toInt, gboStart.toInt + 16 * numGbo))
    val footer = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN)
    footer.putLong(positions.head._1).putLong(newCmo).putLong(newGbo).putInt(numGbo).putInt(numCols)
    footer.put(bytes, n - 8, 8)
    out.write(footer.array())
    out.toByteArray
  }

  test("a 2.0 file rebuilt unchanged still decodes (the damage helper itself is sound)") {
    val (path, df, fields) = firstFile("types_2.0")
    val same = write("same.lance", withColumnMetadata(bytesOf(path), 0)(identity))
    val a = readAll(path, df, fields.take(5)); val b = readAll(same, df, fields.take(5))
    a.zip(b).zip(fields.take(5)).foreach { case ((x, y), f) =>
      (0 until x.length).foreach(i => assert(toJson(x, f, i) == toJson(y, f, i)))
    }
  }

  test("footer version must agree with the manifest; 2.3 and unknown versions are refused") {
    val (path, df, fields) = firstFile("types_2.0")
    expectCorrupt(path, "2.2", "0.3")(readAll(path, df, fields.take(1), 2, 2))
    expectCorrupt(path, "0.3")(readAll(path, df, fields.take(1), 0, 0))
    val b = bytesOf(path)
    for ((maj, min) <- Seq((2, 3), (3, 0), (0, 9))) {
      val v = b.clone()
      ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).putShort(
        v.length - 8,
        maj.toShort
      ).putShort(v.length - 6, min.toShort)
      val p = write(s"v$maj$min.lance", v)
      val e = intercept[LanceUnsupportedException](readAll(p, df, fields.take(1), maj, min))
      assert(
        e.getMessage.contains(s"$maj.$min") && e.getMessage.contains(s"v$maj$min.lance"),
        e.getMessage
      )
    }
    val (lpath, ldf, lfields) = firstFile("types_legacy")
    expectCorrupt(lpath, "2.0")(readAll(lpath, ldf, lfields.take(1), 2, 0))
  }

  test("2.1 and 2.2 files are handed to the structural reader") {
    for (fmt <- Seq("2.1", "2.2")) {
      val (path, df, fields) = firstFile(s"types_$fmt")
      val r = LanceFileReader.open(
        io,
        path,
        df.getFileMajorVersion,
        df.getFileMinorVersion,
        fileFields(df)
      )
      try {
        assert(r.numRows == 500)
        // Whatever the structural reader does (implemented elsewhere), it is the one asked.
        try r.scan(fields.take(1), 0, 1)
        catch {
          case e: LanceUnsupportedException => assert(e.getMessage.contains(s"2.${fmt.last}"))
        }
      } finally r.close()
    }
  }

  test("truncated files fail cleanly, in every format") {
    for (ds <- Seq("types_2.0", "types_legacy")) {
      val (path, df, fields) = firstFile(ds)
      val b = bytesOf(path)
      for (cut <- Seq(3, 20, b.length / 2, b.length - 1)) {
        val p = write(s"cut-$ds-$cut.lance", java.util.Arrays.copyOf(b, cut))
        val e = intercept[_root_.io.sparklance.LanceException](readAll(p, df, fields))
        assert(e.isInstanceOf[LanceCorruptFileException], e.toString)
        assert(e.getMessage.contains(s"cut-$ds-$cut.lance"), e.getMessage)
      }
    }
  }

  test("2.0 page damage names file, field, column and page") {
    val (path, df, fields) = firstFile("types_2.0")
    val b = bytesOf(path)
    val idField = fields.head // column 0, int64, Flat 64
    def damaged(name: String)(f: File2Protos.ColumnMetadata.Page.Builder => Unit): String =
      write(
        name,
        withColumnMetadata(b, 0) { m =>
          val mb = m.toBuilder; f(mb.getPagesBuilder(0)); mb.build()
        }
      )
    // A buffer too small for the page's values.
    val small = damaged("small.lance")(p => p.setBufferSizes(0, p.getBufferSizes(0) / 2))
    expectCorrupt(small, "column 0", "page 0", s"'${idField.name}'")(readAll(
      small,
      df,
      Seq(idField)
    ))
    // A buffer outside the file.
    val outside = damaged("outside.lance")(p => p.setBufferOffsets(0, b.length.toLong * 4))
    expectCorrupt(outside, "column 0", "page 0")(readAll(outside, df, Seq(idField)))
    // More rows than the buffer holds.
    val long = damaged("long.lance")(p => p.setLength(p.getLength * 3))
    expectCorrupt(long, "column 0")(readAll(long, df, Seq(idField)))
    // An encoding that does not parse.
    val garbage = damaged("garbage.lance")(p =>
      p.setEncoding(File2Protos.Encoding.newBuilder()
        .setDirect(File2Protos.DirectEncoding.newBuilder().setEncoding(
          com.google.protobuf.ByteString.copyFrom(Array[Byte](10, 99, 1, 2))
        )))
    )
    expectCorrupt(garbage, "column 0", "page 0")(readAll(garbage, df, Seq(idField)))
    // Missing buffer index.
    val nobuf = damaged("nobuf.lance") { p => p.clearBufferOffsets(); p.clearBufferSizes() }
    expectCorrupt(nobuf, "column 0", "page 0")(readAll(nobuf, df, Seq(idField)))
  }

  test("2.0 string offsets out of order are caught, not read as wrong values") {
    val (path, df, fields) = firstFile("types_2.0")
    val str = fields.find(_.name == "string_none").get
    val col = df.getColumnIndices(df.getFieldsList.indexOf(str.id))
    val b = bytesOf(path)
    val meta = {
      val le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN)
      val cmo = le.getLong(b.length - 32).toInt
      val pos = le.getLong(cmo + 16 * col).toInt; val len = le.getLong(cmo + 16 * col + 8).toInt
      File2Protos.ColumnMetadata.parseFrom(java.util.Arrays.copyOfRange(b, pos, pos + len))
    }
    // Buffer 0 of a Binary page holds the u64 end offsets: make the first one huge.
    val offPos = meta.getPages(0).getBufferOffsets(0).toInt
    val v = b.clone()
    ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).putLong(offPos, 1L << 40)
    val p = write("badoffsets.lance", v)
    expectCorrupt(p, s"column $col", "page 0", "string_none")(readAll(p, df, Seq(str)))
  }

  test("legacy page table pointing outside the file fails cleanly") {
    val (path, df, fields) = firstFile("types_legacy")
    val b = bytesOf(path)
    val le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN)
    val metaPos = le.getLong(b.length - 16).toInt
    val metaLen = le.getInt(metaPos)
    val meta =
      _root_.io.sparklance.proto.FileProtos.Metadata.parseFrom(java.util.Arrays.copyOfRange(
        b,
        metaPos + 4,
        metaPos + 4 + metaLen
      ))
    val pt = meta.getPageTablePosition.toInt
    val v = b.clone()
    ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).putLong(
      pt,
      b.length.toLong * 10
    ) // field min id, batch 0
    val p = write("legacy-pt.lance", v)
    val first = fields.find(_.id == fields.map(_.id).min).get
    expectCorrupt(p, s"'${first.name}'", "page 0")(readAll(p, df, Seq(first)))
  }

  test("ColumnArrays.take selects rows of every kind of array") {
    val (path, df, fields) = firstFile("types_2.0")
    val cols = readAll(path, df, fields)
    // Single rows, repeats, and runs of consecutive rows (copied a run at a time).
    for (
      idx <- Seq(
        Array(499, 0, 3, 3, 250),
        Array(0, 1, 2, 5, 6, 7, 8, 497, 498, 499, 100, 101, 3, 3, 4, 250, 251)
      )
    ) {
      cols.zip(fields).foreach { case (c, f) =>
        val t = ColumnArrays.take(c, idx)
        assert(t.length == idx.length)
        idx.indices.foreach(i =>
          assert(toJson(t, f, i) == toJson(c, f, idx(i)), s"${f.name} row $i")
        )
      }
    }
  }
}
