package io.sparklance.spark

import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors

/** Typed option values shared by the read and write options: each bad value is an
 *  `invalidOption` error naming the option, the value and what was expected. */
private[spark] object OptionValues {
  def positiveLong(options: CaseInsensitiveStringMap, key: String, default: Long): Long =
    longAtLeast(options, key, default, 1, "a positive integer")

  def nonNegativeLong(options: CaseInsensitiveStringMap, key: String, default: Long): Long =
    longAtLeast(options, key, default, 0, "a non-negative integer")

  private def longAtLeast(
      options: CaseInsensitiveStringMap,
      key: String,
      default: Long,
      least: Long,
      what: String
  ): Long =
    Option(options.get(key)).map { v =>
      val n =
        try v.trim.toLong
        catch {
          case _: NumberFormatException =>
            throw LanceErrors.invalidOption(key, v, s"expected $what")
        }
      if (n < least) throw LanceErrors.invalidOption(key, v, s"expected $what")
      n
    }.getOrElse(default)

  def positiveInt(options: CaseInsensitiveStringMap, key: String, default: Int): Int = {
    val n = positiveLong(options, key, default)
    if (n > Int.MaxValue) throw LanceErrors.invalidOption(key, n.toString, "too large")
    n.toInt
  }

  /** A number in (0, 1]. */
  def share(options: CaseInsensitiveStringMap, key: String, default: Double): Double =
    Option(options.get(key)).map { v =>
      val x =
        try v.trim.toDouble
        catch { case _: NumberFormatException => Double.NaN }
      if (!(x > 0 && x <= 1))
        throw LanceErrors.invalidOption(key, v, "expected a number above 0 and at most 1")
      x
    }.getOrElse(default)

  def bool(options: CaseInsensitiveStringMap, key: String, default: Boolean): Boolean =
    Option(options.get(key)).map(_.trim.toLowerCase) match {
      case None => default
      case Some("true") => true
      case Some("false") => false
      case Some(v) => throw LanceErrors.invalidOption(key, v, "expected true or false")
    }
}
