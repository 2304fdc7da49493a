package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.expressions.SpecializedGetters

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, FixedSizeListArray, FixedWidthArray, LanceField}
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.format.writer.ByteBuf

/**
 * pyspark.ml / MLlib vectors (`VectorUDT`, stored by Spark as struct<type: tinyint, size: int,
 * indices: array<int>, values: array<double>>) as `fixed_size_list<double>[dim]`: dense ones
 * copied, sparse ones expanded with zeros. A vector of another length fails naming the column.
 */
private[write] final class MlVectorBuilder(f: LanceField, dim: Int) extends ColBuilder(f) {
  private val data = new ByteBuf(4096)
  def bytes: Long = data.size

  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    val v = g.getStruct(ord, 4)
    val values = v.getArray(3)
    val dense = v.getByte(0) == 1
    val size = if (dense) values.numElements() else v.getInt(1)
    if (size != dim)
      throw LanceErrors.schemaMismatch(
        "",
        f.name,
        s"holds a vector of $size values but the " +
          s"column stores exactly $dim (${f.logicalType.text})"
      )
    val at = data.size
    data.zeros(8 * dim)
    val out = data.array
    if (dense) {
      var i = 0
      while (i < dim) {
        LE.putI64(out, at + 8 * i, java.lang.Double.doubleToRawLongBits(values.getDouble(i)))
        i += 1
      }
    } else {
      val indices = v.getArray(2)
      var k = 0
      while (k < indices.numElements()) {
        val i = indices.getInt(k)
        if (i < 0 || i >= dim)
          throw LanceErrors.schemaMismatch(
            "",
            f.name,
            s"holds a sparse vector index $i " +
              s"outside its $dim values"
          )
        LE.putI64(out, at + 8 * i, java.lang.Double.doubleToRawLongBits(values.getDouble(k)))
        k += 1
      }
    }
  }

  protected def addPlaceholder(): Unit = data.zeros(8 * dim)

  def build(): ColumnArray = {
    val n = size
    val out = new FixedSizeListArray(
      n,
      takeNulls(),
      dim,
      new FixedWidthArray(n * dim, null, 8, data.toArray)
    )
    data.clear()
    out
  }
}

private[write] object MlVectorBuilder {

  /** Spark ML's and MLlib's vector types, by class name (spark-mllib is not on our classpath). */
  def isMlVector(dt: org.apache.spark.sql.types.DataType): Boolean = dt match {
    case u: org.apache.spark.sql.types.UserDefinedType[_] =>
      val n = u.getClass.getName
      n == "org.apache.spark.ml.linalg.VectorUDT" || n == "org.apache.spark.mllib.linalg.VectorUDT"
    case _ => false
  }
}
