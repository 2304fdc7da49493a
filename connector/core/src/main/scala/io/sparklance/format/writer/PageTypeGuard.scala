package io.sparklance.format.writer

import com.google.protobuf.Message

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LogicalType}
import io.sparklance.proto.{EncodingsV20Protos => V20}
import io.sparklance.proto.EncodingsV21Protos._

/**
 * The last check before a data file is finished: every page of every column must be one
 * that pylance 14.0.2's reader decodes to the column's declared type. A page that is not is
 * an encoder bug; it fails the write, and so the commit, naming the file, the column, the
 * page and both types, instead of leaving a table that pylance and LanceDB cannot read.
 *
 * What it knows of pylance's reader (the rules a wrong page broke before):
 *  - a dictionary column (`dict:<values>:<keys>`) decodes only from dictionary pages whose
 *    keys have the key type's width (2.1/2.2: a mini-block page with a dictionary, or a
 *    page of nulls only; 2.0: a `Dictionary` of `Flat` keys); its entries must have the
 *    value type's shape;
 *  - a dictionary page of any other column has 32-bit keys (the width pylance's own
 *    dictionaries have);
 *  - a `null` column holds pages of nulls only.
 */
private[writer] object PageTypeGuard {

  /** Checks the pages `pages(c)` of each column `c`, whose field is `columns(c)`. */
  def check(
      file: String,
      version: FileVersion,
      columns: Seq[LanceField],
      pages: Int => Seq[(Message, Int)]
  ): Unit =
    columns.zipWithIndex.foreach { case (f, c) =>
      pages(c).zipWithIndex.foreach { case ((page, buffers), p) =>
        mismatch(f, page, buffers).foreach { why =>
          throw LanceErrors.unreadablePage(file, f.name, f.id, f.logicalType.text, p, why)
        }
      }
    }

  /** Why `page` (with `buffers` buffers) cannot be read as `f`'s type, or None. */
  def mismatch(f: LanceField, page: Message, buffers: Int): Option[String] = page match {
    case l: PageLayout => structural(f, l, buffers)
    case a: V20.ArrayEncoding => v20(f, a)
    case _ => None
  }

  private def structural(f: LanceField, l: PageLayout, buffers: Int): Option[String] = {
    def allNull = l.hasConstantLayout && !l.getConstantLayout.hasInlineValue &&
      (buffers == 0 || buffers == 2)
    val dict = if (l.hasMiniBlockLayout && l.getMiniBlockLayout.hasDictionary)
      Some(l.getMiniBlockLayout)
    else None
    f.logicalType match {
      case d: LogicalType.Dictionary =>
        val want = 8L * DeclaredDictionary.keyWidth(f.name, d)
        dict match {
          case None if allNull => None
          case None => Some(s"a ${describe(l)} page, not a dictionary page with $want-bit keys")
          case Some(m) =>
            val keys = bits(m.getValueCompression)
            if (!keys.contains(want)) Some(s"a dictionary page with ${keys.getOrElse("?")}-bit " +
              s"keys, not $want-bit keys")
            else entries(d.value, m.getDictionary)
              .map(e => s"a dictionary page whose entries are $e")
        }
      case LogicalType.Null =>
        if (allNull) None else Some(s"a ${describe(l)} page, not a page of nulls only")
      case _ =>
        dict.flatMap { m =>
          val keys = bits(m.getValueCompression)
          if (keys.contains(32L)) None
          else Some(s"a dictionary page with ${keys.getOrElse("?")}-bit keys, not 32-bit keys")
        }
    }
  }

  /** How a dictionary block's entries differ from values of type `t`, or None. */
  private def entries(t: LogicalType, e: CompressiveEncoding): Option[String] = {
    val inner = if (e.hasGeneral) e.getGeneral.getValues else e
    val got =
      if (inner.hasVariable)
        bits(inner.getVariable.getOffsets).map(b => s"variable-width ($b-bit offsets)")
      else bits(inner).map(b => s"$b-bit fixed-width")
    val want =
      if (isVar(t)) s"variable-width (${if (LeafValues.isLarge(t)) 64 else 32}-bit offsets)"
      else width(t).map(w => s"${8 * w}-bit fixed-width").getOrElse("?")
    if (got.contains(want)) None else Some(s"${got.getOrElse("unknown")} for ${t.text} values")
  }

  private def isVar(t: LogicalType): Boolean = t match {
    case LogicalType.Utf8 | LogicalType.LargeUtf8 | LogicalType.Binary | LogicalType.LargeBinary |
        LogicalType.Json => true
    case _ => false
  }

  private def width(t: LogicalType): Option[Int] =
    if (isVar(t)) None
    else scala.util.Try(io.sparklance.format.ValueShape.ofType(t, null)).toOption.collect {
      case io.sparklance.format.ValueShape.Fixed(w, false) => w
    }

  /** The bits of one value a compressive encoding stands for, where it says. */
  private def bits(e: CompressiveEncoding): Option[Long] =
    if (e.hasFlat) Some(e.getFlat.getBitsPerValue)
    else if (e.hasInlineBitpacking) Some(e.getInlineBitpacking.getUncompressedBitsPerValue)
    else if (e.hasOutOfLineBitpacking) Some(e.getOutOfLineBitpacking.getUncompressedBitsPerValue)
    else if (e.hasRle) bits(e.getRle.getValues)
    else if (e.hasGeneral) bits(e.getGeneral.getValues)
    else if (e.hasByteStreamSplit) bits(e.getByteStreamSplit.getValues)
    else None

  private def describe(l: PageLayout): String =
    if (l.hasMiniBlockLayout) "mini-block"
    else if (l.hasConstantLayout) "constant"
    else if (l.hasFullZipLayout) "full-zip"
    else if (l.hasBlobLayout) "blob"
    else "unknown"

  private def v20(f: LanceField, a: V20.ArrayEncoding): Option[String] = f.logicalType match {
    case d: LogicalType.Dictionary =>
      val want = 8L * DeclaredDictionary.keyWidth(f.name, d)
      if (!a.hasDictionary) Some(s"a ${a.getArrayEncodingCase.name.toLowerCase} page, not a " +
        s"dictionary page with $want-bit keys")
      else {
        val keys = a.getDictionary.getIndices
        val got =
          if (
            keys.hasNullable && keys.getNullable.hasNoNulls &&
            keys.getNullable.getNoNulls.getValues.hasFlat
          )
            Some(keys.getNullable.getNoNulls.getValues.getFlat.getBitsPerValue)
          else None
        if (got.contains(want)) None
        else Some(s"a dictionary page with ${got.map(b => s"$b-bit").getOrElse("non-flat")} " +
          "keys, " +
          s"not $want-bit flat keys")
      }
    case LogicalType.Null =>
      if (a.hasNullable && a.getNullable.hasAllNulls) None
      else Some(s"a ${a.getArrayEncodingCase.name.toLowerCase} page, not a page of nulls only")
    case _ => None
  }
}
