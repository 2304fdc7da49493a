package io.sparklance.format.structural

import io.sparklance.{LanceCorruptFileException, LanceErrors, LanceUnsupportedException}

/** Names one page for error messages: file, column (index, field name and id) and page. */
private[structural] final class PageRef(
    val path: String,
    val column: Int,
    val field: String,
    val fieldId: Int,
    val page: Int
) {
  private def where = s"column $column (field '$field', id $fieldId), page $page"
  def corrupt(why: String, cause: Throwable = null): LanceCorruptFileException =
    LanceErrors.corruptFile(path, s"$where: $why", cause)
  def unsupported(why: String): LanceUnsupportedException =
    LanceErrors.unsupported(s"Lance file $path, $where: $why")
  def check(cond: Boolean, why: => String): Unit = if (!cond) throw corrupt(why)
  override def toString: String = s"$path, $where"
}

/** A byte range of a buffer (no copy). */
private[structural] final class Slice(val a: Array[Byte], val off: Int, val len: Int) {
  def end: Int = off + len
  def sub(o: Int, l: Int): Slice = new Slice(a, off + o, l)
}
private[structural] object Slice {
  def of(a: Array[Byte]): Slice = new Slice(a, 0, a.length)
}
