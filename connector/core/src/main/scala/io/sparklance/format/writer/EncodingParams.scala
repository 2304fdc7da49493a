package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format.LanceField
import io.sparklance.format.codec.GeneralCompression

/**
 * The `lance-encoding:*` field metadata that steers how a leaf column is written, read the
 * way pylance 14.0.2 reads it: compression settings from the leaf field itself, the
 * structural encoding from its top-level field.
 *
 *  - `lance-encoding:compression`: `none` (no value compression at all), `fsst` (strings),
 *    `zstd` or `lz4` (general compression of every mini-block chunk's values, or of every
 *    full-zip string), with `lance-encoding:compression-level`;
 *  - `lance-encoding:structural-encoding`: `miniblock` or `fullzip`;
 *  - `lance-encoding:dict-divisor` (2), `lance-encoding:dict-size-ratio` (0.8),
 *    `lance-encoding:dict-values-compression` (`lz4` in 2.2) and its level: dictionary limits;
 *  - `lance-encoding:rle-threshold`: runs must be fewer than this fraction of the values;
 *  - `lance-encoding:bss` (`auto`, `on`, `off`): byte-stream split under general compression.
 */
private[writer] final case class EncodingParams(
    compression: Option[String],
    compressionLevel: Option[Int],
    structural: Option[String],
    dictDivisor: Long,
    dictSizeRatio: Double,
    dictValuesCompression: String,
    dictValuesLevel: Option[Int],
    rleThreshold: Option[Double],
    bss: String = "auto"
) {

  /** The general scheme requested for values (zstd or lz4), if any. */
  def generalScheme: Option[Int] = compression.flatMap(EncodingParams.scheme)
  def noCompression: Boolean = compression.contains("none")
  def fsstRequested: Boolean = compression.contains("fsst")
  def level: Int = compressionLevel.getOrElse(0)
}

private[writer] object EncodingParams {
  val CompressionKey = "lance-encoding:compression"
  val CompressionLevelKey = "lance-encoding:compression-level"
  val StructuralKey = "lance-encoding:structural-encoding"
  val DictDivisorKey = "lance-encoding:dict-divisor"
  val DictSizeRatioKey = "lance-encoding:dict-size-ratio"
  val DictValuesCompressionKey = "lance-encoding:dict-values-compression"
  val DictValuesLevelKey = "lance-encoding:dict-values-compression-level"
  val RleThresholdKey = "lance-encoding:rle-threshold"
  val BssKey = "lance-encoding:bss"

  val Default: EncodingParams = EncodingParams(None, None, None, 2L, 0.8, "lz4", None, None)

  def scheme(name: String): Option[Int] = name match {
    case "zstd" => Some(GeneralCompression.Zstd)
    case "lz4" => Some(GeneralCompression.Lz4)
    case _ => None
  }

  /** Parameters of `leaf`, whose top-level field is `top`; bad values fail naming the column. */
  def of(leaf: LanceField, top: LanceField): EncodingParams = {
    def str(f: LanceField, k: String): Option[String] = f.metadataString(k).map(_.trim)
    // String.toIntOption and friends are Scala 2.13 only.
    def parse[T](v: => T): Option[T] =
      try Some(v)
      catch { case _: NumberFormatException => None }
    def bad(k: String, v: String, why: String): Nothing =
      throw LanceErrors.unsupported(
        s"Column '${leaf.name}': field metadata $k=$v is not valid ($why)"
      )
    val compression = str(leaf, CompressionKey).map(_.toLowerCase)
    compression.foreach { c =>
      if (!Set("none", "fsst", "zstd", "lz4").contains(c))
        bad(CompressionKey, c, "expected none, fsst, zstd or lz4")
    }
    def int(k: String): Option[Int] =
      str(leaf, k).map(v => parse(v.toInt).getOrElse(bad(k, v, "expected an integer")))
    val structural = str(top, StructuralKey).map(_.toLowerCase)
    structural.foreach { s =>
      if (s != "miniblock" && s != "fullzip") bad(StructuralKey, s, "expected miniblock or fullzip")
    }
    val divisor = str(leaf, DictDivisorKey).flatMap(v => parse(v.toLong)).filter(_ > 0).getOrElse(
      Default.dictDivisor
    )
    val ratio = str(leaf, DictSizeRatioKey).map { v =>
      val r = parse(v.toDouble).getOrElse(bad(DictSizeRatioKey, v, "expected a number"))
      if (!(r > 0 && r <= 1)) bad(DictSizeRatioKey, v, "expected a ratio in (0, 1]")
      r
    }.getOrElse(Default.dictSizeRatio)
    val dictValues = str(leaf, DictValuesCompressionKey).map(_.toLowerCase).getOrElse(
      Default.dictValuesCompression
    )
    if (!Set("none", "zstd", "lz4").contains(dictValues))
      bad(DictValuesCompressionKey, dictValues, "expected none, zstd or lz4")
    EncodingParams(
      compression = compression,
      compressionLevel = int(CompressionLevelKey),
      structural = structural,
      dictDivisor = divisor,
      dictSizeRatio = ratio,
      dictValuesCompression = dictValues,
      dictValuesLevel = int(DictValuesLevelKey),
      rleThreshold = str(leaf, RleThresholdKey).flatMap(v => parse(v.toDouble)),
      // pylance ignores an unknown mode (with a warning) and stays on auto.
      bss = str(leaf, BssKey).map(_.toLowerCase).filter(Set("auto", "on", "off")).getOrElse("auto")
    )
  }
}
