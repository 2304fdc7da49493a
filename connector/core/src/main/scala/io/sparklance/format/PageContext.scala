package io.sparklance.format

import io.sparklance.{LanceCorruptFileException, LanceErrors, LanceException}

/**
 * Where a decoder is: file, field, column (or legacy page-table row) and page. Every
 * deliberate decode error goes through here, so messages always say where the bad bytes are.
 */
final case class PageContext(
    file: String,
    fieldName: String,
    fieldId: Int,
    column: Int,
    page: Int
) {
  def corrupt(why: String, cause: Throwable = null): LanceCorruptFileException =
    LanceErrors.corruptPage(file, fieldName, fieldId, column, page, why, cause)

  def check(ok: Boolean, why: => String): Unit = if (!ok) throw corrupt(why)

  def withPage(p: Int): PageContext = copy(page = p)

  /**
   * Runs a decode step, turning the runtime errors that malformed input can still provoke
   * (despite size checks) into a corrupt-file error naming this page.
   */
  def guard[T](body: => T): T =
    try body
    catch {
      case e: LanceException => throw e
      case e @ (_: IndexOutOfBoundsException | _: NegativeArraySizeException | _: IllegalArgumentException |
          _: ArithmeticException | _: java.nio.BufferUnderflowException | _: NullPointerException |
          _: ClassCastException | _: com.google.protobuf.InvalidProtocolBufferException) =>
        throw corrupt(s"does not decode: $e", e)
    }
}
