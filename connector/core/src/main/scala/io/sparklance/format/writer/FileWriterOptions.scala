package io.sparklance.format.writer

/** Options of the file writer. `pageBudgetBytes` bounds the values a column buffers before it writes a page. */
final case class FileWriterOptions(pageBudgetBytes: Long = FileWriterOptions.DefaultPageBudget)
object FileWriterOptions {
  val DefaultPageBudget: Long = 8L * 1024 * 1024
}
