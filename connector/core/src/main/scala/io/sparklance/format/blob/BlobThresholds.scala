package io.sparklance.format.blob

import io.sparklance.LanceErrors
import io.sparklance.format.LanceField

/**
 * How blob v2 values of one column are placed (pylance 14.0.2 `BlobPreprocessor`), from the
 * field's metadata: a value longer than `dedicated` bytes gets a sidecar file of its own, one
 * longer than `inline` goes to the shared packed sidecar (a new pack starts when the current
 * one would exceed `packFile` bytes), anything else (empty values included) stays in the data
 * file.
 */
final case class BlobThresholds(inline: Long, dedicated: Long, packFile: Long)
object BlobThresholds {
  val InlineKey = "lance-encoding:blob-inline-size-threshold"
  val DedicatedKey = "lance-encoding:blob-dedicated-size-threshold"
  val PackFileKey = "lance-encoding:blob-pack-file-size-threshold"
  val Keys: Seq[String] = Seq(InlineKey, DedicatedKey, PackFileKey)

  val DefaultInline: Long = 64L * 1024
  val DefaultDedicated: Long = 4L * 1024 * 1024
  val DefaultPackFile: Long = 1024L * 1024 * 1024

  /** The thresholds of blob field `f`; a bad value fails naming the column and key, as pylance refuses it. */
  def of(f: LanceField): BlobThresholds = BlobThresholds(
    parse(f, InlineKey, DefaultInline, allowZero = true),
    parse(f, DedicatedKey, DefaultDedicated, allowZero = false),
    parse(f, PackFileKey, DefaultPackFile, allowZero = false)
  )

  private def parse(f: LanceField, key: String, default: Long, allowZero: Boolean): Long =
    f.metadataString(key) match {
      case scala.None => default
      case Some(s) =>
        val v =
          try s.trim.toLong
          catch { case _: NumberFormatException => -1L }
        if (v < 0 || (!allowZero && v == 0))
          throw LanceErrors.unsupported(
            s"Column '${f.name}': blob threshold metadata $key='$s' must be a " +
              (if (allowZero) "non-negative" else "positive") + " integer"
          )
        v
    }
}
