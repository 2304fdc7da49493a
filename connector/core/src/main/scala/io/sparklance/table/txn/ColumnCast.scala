package io.sparklance.table.txn

import java.math.BigInteger

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, FixedWidthArray, LanceField, LogicalType, NullArray}
import io.sparklance.format.writer.{FileVersion, LanceFileWriter, SchemaProtos}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{BestEffort, FileIO, Paths, StreamSink}
import io.sparklance.table.{
  DatasetLayout,
  DeletionVector,
  FragmentReader,
  FragmentRef,
  SchemaEdits,
  Snapshot
}
import io.sparklance.table.commit.{DataFileNames, NewDataFile}

/**
 * Changing top-level columns' types as pylance's `alter_columns(... data_type=...)` does: each
 * fragment gets one new data file holding the cast columns (every physical row, deleted ones
 * too, so rows stay aligned), under new field ids at the old fields' places in the schema;
 * the old files keep their columns, now unreferenced. One Merge commits it (pylance does not
 * retry a Merge, nor does this). Only widenings whose every value converts exactly and that
 * pylance 14 casts too: signed integers to wider integers, float32 to float64, and decimals
 * to a precision and scale that hold every value (pylance refuses integers to floats).
 */
object ColumnCast {
  import LogicalType._

  private val BatchRows = 8192

  private def intWidth(t: LogicalType): Option[Int] = t match {
    case Int8 => Some(1); case Int16 => Some(2); case Int32 => Some(4); case Int64 => Some(8)
    case _ => None
  }

  /** Whether `from` values all convert exactly to `to`. */
  def supported(from: LogicalType, to: LogicalType): Boolean = (from, to) match {
    case _ if from == to => false
    case (Float32, Float64) => true
    case (f, t) if intWidth(f).isDefined && intWidth(t).isDefined =>
      intWidth(f).get < intWidth(t).get
    case (Decimal(128, p, s), Decimal(128, p2, s2)) => s2 >= s && p2 - s2 >= p - s
    case _ => false
  }

  /**
   * Writes the cast columns of every fragment of `s` (`casts`: column name -> new type) and
   * returns the Merge committing them with the data files written (deleted by the caller
   * when the commit fails).
   */
  def write(
      fileIO: FileIO,
      s: Snapshot,
      casts: Seq[(String, LogicalType)]
  ): (Merge, Seq[String]) = {
    val root = Paths.stripTrailingSlash(s.root)
    val olds = casts.map { case (name, to) =>
      val f = s.schema.fields.find(_.name == name).getOrElse(throw LanceErrors
        .invalidSchemaChange(root, s"column '$name' does not exist"))
      if (!supported(f.logicalType, to))
        throw LanceErrors.invalidSchemaChange(
          root,
          s"column '$name' cannot change type from " +
            s"${f.logicalType.text} to ${to.text}: only widenings every value survives exactly " +
            "(integers to wider integers, float32 to float64, wider decimals)"
        )
      f
    }
    val first = SchemaEdits.firstFreeId(s.manifest)
    val news = olds.zip(casts).zipWithIndex.map { case ((f, (_, to)), i) =>
      f.copy(id = first + i, logicalType = to)
    }
    val version = FileVersion.ofDataset(s.dataStorageVersion, root)
    val token = DataFileNames.newToken()
    val written = scala.collection.mutable.ArrayBuffer[String]()
    try {
      val fragments = s.fragments.map { frag =>
        val name = DataFileNames.next(token)
        written += DatasetLayout.dataFile(root, name)
        val file = castFragment(fileIO, s, frag, olds, news, version, written.last, name)
        frag.toBuilder.addFiles(file.toProto).build()
      }
      val replaced = olds.map(_.id).zip(news).toMap
      val fields = s.manifest.getFieldsList.asScala.toSeq.map { p =>
        replaced.get(p.getId).fold(p)(n => SchemaProtos.fieldProto(n))
      }
      (Merge(fragments, fields, rewritesRows = true), written.toSeq)
    } catch {
      case e: Throwable =>
        written.foreach(BestEffort.delete(fileIO, _))
        throw e
    }
  }

  private def castFragment(
      fileIO: FileIO,
      s: Snapshot,
      frag: TableProtos.DataFragment,
      olds: Seq[LanceField],
      news: Seq[LanceField],
      version: FileVersion,
      path: String,
      name: String
  ): NewDataFile = {
    val ref = FragmentRef(s.root, s, frag)
    val w = new LanceFileWriter(new StreamSink(fileIO.create(path)), news, version)
    try {
      val r = new FragmentReader(fileIO, ref, olds, DeletionVector.Empty, 0, ref.physicalRows)
      try while (r.remaining > 0) {
          val (arrays, n) = r.next(math.min(BatchRows.toLong, r.remaining).toInt)
          w.write(arrays.indices.map(i =>
            cast(arrays(i), olds(i).logicalType, news(i).logicalType, n)
          ).toArray)
        }
      finally r.close()
      val done = w.finish()
      NewDataFile(
        name,
        done.fieldIds,
        done.columnIndices,
        version.major,
        version.minor,
        done.sizeBytes,
        done.numRows
      )
    } finally w.close()
  }

  private def widthOf(t: LogicalType): Int = t match {
    case Float64 => 8; case Float32 => 4; case Decimal(b, _, _) => b / 8
    case other => intWidth(other).get
  }

  /** One batch of `from` values as `to` (a supported pair). */
  private[txn] def cast(a: ColumnArray, from: LogicalType, to: LogicalType, n: Int): ColumnArray =
    a match {
      case _: NullArray => // the column is absent from this fragment: all null
        new FixedWidthArray(n, Array.fill(n)(true), widthOf(to), new Array[Byte](n * widthOf(to)))
      case in: FixedWidthArray => castValues(in, from, to, n)
      case other => throw new IllegalStateException(s"cannot cast ${other.getClass.getSimpleName}")
    }

  private def castValues(
      in: FixedWidthArray,
      from: LogicalType,
      to: LogicalType,
      n: Int
  ): ColumnArray = {
    val src = java.nio.ByteBuffer.wrap(in.data).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val width = widthOf(to)
    val out = java.nio.ByteBuffer.allocate(n * width).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val fromWidth = intWidth(from).getOrElse(0) // decided once, not per value
    def long(i: Int): Long = fromWidth match {
      case 1 => in.data(i).toLong
      case 2 => src.getShort(i * 2).toLong
      case 4 => src.getInt(i * 4).toLong
      case _ => src.getLong(i * 8)
    }
    var i = 0
    (from, to) match {
      case (Float32, Float64) =>
        while (i < n) { out.putDouble(i * 8, src.getFloat(i * 4).toDouble); i += 1 }
      // Same scale: the 128-bit unscaled values are unchanged.
      case (Decimal(_, _, s), Decimal(_, _, s2)) if s == s2 =>
        System.arraycopy(in.data, 0, out.array(), 0, n * 16)
      case (Decimal(_, _, s), Decimal(_, _, s2)) =>
        val factor = BigInteger.TEN.pow(s2 - s)
        val le = new Array[Byte](16)
        val be = new Array[Byte](16) // BigInteger copies it: one buffer serves every value
        while (i < n) {
          if (in.nulls == null || !in.nulls(i)) {
            var k = 0
            while (k < 16) { be(k) = in.data(i * 16 + 15 - k); k += 1 }
            val v = new BigInteger(be).multiply(factor).toByteArray
            java.util.Arrays.fill(le, (if (v(0) < 0) -1 else 0).toByte)
            k = 0
            while (k < v.length) { le(k) = v(v.length - 1 - k); k += 1 }
            System.arraycopy(le, 0, out.array(), i * 16, 16)
          }
          i += 1
        }
      case _ =>
        intWidth(to).get match {
          case 2 => while (i < n) { out.putShort(i * 2, long(i).toShort); i += 1 }
          case 4 => while (i < n) { out.putInt(i * 4, long(i).toInt); i += 1 }
          case _ => while (i < n) { out.putLong(i * 8, long(i)); i += 1 }
        }
    }
    new FixedWidthArray(n, in.nulls, width, out.array())
  }
}
