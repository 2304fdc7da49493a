package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.DataType

import io.sparklance.format.{ColumnArray, LanceField}
import io.sparklance.format.blob.BlobColumn

/**
 * Rows of one DataFrame into batches of the dataset's top-level fields. `UnsafeRow`s (what
 * Spark's plans produce) are staged whole ([[StagedRows]]) and handed to the builders of
 * plain columns (numbers, dates, decimals of up to 18 digits, strings, binaries) a few
 * hundred at a time; nested and converted columns take each row as it comes. Any other row
 * takes the per-row path for all columns, after the staged rows before it.
 */
private[write] final class RowBatcher(
    fields: Seq[LanceField],
    types: Seq[DataType],
    ordinals: Seq[Int]
) {
  private val builders = fields.zip(types).map { case (f, t) => ColBuilder(f, t) }.toArray
  private val ords = ordinals.toArray
  // Blob rows can be many MiB each: not copied once more.
  private val stage =
    if (
      StagedRows.Supported && builders.exists(_.stageable) &&
      !fields.exists(BlobColumn.containsBlob)
    ) new StagedRows
    else null
  private val staged = builders.indices.filter(i => stage != null && builders(i).stageable).toArray
  private val direct = builders.indices.filterNot(staged.contains).toArray

  var rows = 0

  def add(row: InternalRow): Unit = {
    row match {
      case u: UnsafeRow if stage != null =>
        if (!stage.accepts(u)) drain()
        stage.add(u)
        var j = 0
        while (j < direct.length) { val i = direct(j); builders(i).add(row, ords(i)); j += 1 }
        if (stage.full) drain()
      case _ =>
        drain()
        var i = 0
        while (i < builders.length) { builders(i).add(row, ords(i)); i += 1 }
    }
    rows += 1
  }

  /** Hands the staged rows to their columns' builders. */
  private def drain(): Unit = if (stage != null && stage.rows > 0) {
    var j = 0
    while (j < staged.length) { val i = staged(j); builders(i).addStaged(stage, ords(i)); j += 1 }
    stage.clear()
  }

  def bytes: Long = {
    var b = if (stage == null) 0L else stage.bytes
    var i = 0
    while (i < builders.length) { b += builders(i).bytes; i += 1 }
    b
  }

  /**
   * The batch's columns. Plain columns are views over their builders' buffers
   * ([[ColBuilder.view]]), so the arrays are valid only until the next [[add]]: the caller
   * hands them to the file writer, which copies what it keeps, before adding a row.
   */
  def build(): Array[ColumnArray] = { drain(); rows = 0; builders.map(_.view()) }
}
