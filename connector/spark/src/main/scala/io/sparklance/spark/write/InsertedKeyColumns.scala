package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

import io.sparklance.table.txn.KeyBloom

/** The primary key's columns in the rows a MERGE inserts: ordinals and Spark types. */
final case class InsertedKeyColumns(ordinals: Seq[Int], types: Seq[DataType]) {

  /** The key of `row` as Lance hashes it; None when a part is null (Lance skips those). */
  def keyOf(row: InternalRow): Option[Array[Byte]] = {
    val parts = ordinals.zip(types).map { case (o, t) =>
      if (row.isNullAt(o)) return None
      t match {
        case IntegerType => KeyBloom.Key.long(row.getInt(o).toLong)
        case LongType => KeyBloom.Key.long(row.getLong(o))
        case StringType => row.getUTF8String(o).getBytes
        case BinaryType => row.getBinary(o)
        case d: DecimalType => // uint64 read as decimal(20,0): its 64 bits
          KeyBloom.Key.long(row.getDecimal(o, d.precision, d.scale).toJavaBigDecimal
            .toBigInteger.longValue)
        case other => throw new IllegalStateException(s"key column of type $other")
      }
    }
    Some(if (parts.size == 1) parts.head else KeyBloom.Key.composite(parts))
  }
}
