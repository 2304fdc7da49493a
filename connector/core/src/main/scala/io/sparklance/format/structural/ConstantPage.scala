package io.sparklance.format.structural

import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.{CompressiveEncoding, ConstantLayout}

/**
 * A constant page (2.2) or all-null page (2.1 AllNullLayout, same message slot): one value
 * for every visible item, or none at all. The scalar is inline (raw little-endian bytes, a
 * bool as a one-byte bitmap) or in a first buffer holding the Arrow buffers of a length-1
 * array (`u32 count, u32 lengths[count], bytes`). Rep/def levels, when present, follow: raw
 * u16 next to a scalar; possibly compressed (`rep_compression`) on all-null pages.
 */
private[structural] final class ConstantPage(
    io: PageIO,
    layout: ConstantLayout,
    layers: Layers,
    defMap: Array[Short],
    pageMaxVisibleDef: Int,
    leafKind: ValuesBuilder,
    isBool: Boolean,
    numRows: Long,
    rowFrom: Long,
    rowUntil: Long,
    ref: PageRef
) extends LevelPage(layers, defMap, pageMaxVisibleDef, ref) {

  private val nb = io.numBuffers
  private val inline = layout.hasInlineValue
  private val hasScalar = inline || nb == 1 || nb == 3
  ref.check(nb <= 3, s"constant page with $nb buffers")
  ref.check(
    !(inline && (nb == 1 || nb == 3)),
    s"constant page with an inline value and $nb buffers"
  )

  private val scalar: Values = if (!hasScalar) null
  else if (inline) fixedScalar(Slice.of(layout.getInlineValue.toByteArray))
  else bufferScalar(io.buffer(0))

  private def fixedScalar(s: Slice): Values = leafKind match {
    case f: FixedBuilder =>
      if (isBool) {
        ref.check(s.len >= 1, "empty bool constant");
        new FixedValues(1, 1, Array((s.a(s.off) & 1).toByte), 0)
      } else {
        ref.check(s.len == f.width, s"constant of ${s.len} bytes for a ${f.width}-byte type");
        new FixedValues(1, f.width, s.a, s.off)
      }
    case _: VarBuilder => new VarValues(1, Array(s.off, s.off + s.len), 0, s.a)
    case other => throw ref.unsupported(s"constant value for ${other.getClass.getSimpleName}")
  }

  private def bufferScalar(b: Slice): Values = {
    ref.check(b.len >= 4, "constant value buffer has no header")
    val count = LE.i32(b.a, b.off)
    ref.check(
      count >= 1 && count <= 8 && b.len >= 4 + 4 * count,
      s"constant value buffer declares $count buffers"
    )
    val lens = Array.tabulate(count)(k => LE.i32(b.a, b.off + 4 + 4 * k))
    val starts = lens.scanLeft(b.off + 4 + 4 * count)(_ + _)
    ref.check(
      lens.forall(_ >= 0) && starts(count) == b.end,
      "constant value buffer lengths do not add up"
    )
    leafKind match {
      case _: VarBuilder if count == 2 =>
        val ow = lens(0) / 2
        ref.check(ow == 4 || ow == 8, s"constant string offsets of ${lens(0)} bytes")
        val s = LE.uint(b.a, starts(0), ow); val e = LE.uint(b.a, starts(0) + ow, ow)
        ref.check(s >= 0 && s <= e && e <= lens(1), "constant string offsets out of range")
        new VarValues(1, Array(starts(1) + s.toInt, starts(1) + e.toInt), 0, b.a)
      case _ => fixedScalar(new Slice(b.a, starts(0), lens(0)))
    }
  }

  private def levels(i: Int, codecOpt: Option[CompressiveEncoding], count: Long): Array[Short] = {
    if (i >= nb || io.bufferSize(i) == 0) return null
    val s = io.buffer(i)
    codecOpt match {
      case Some(c) =>
        ref.check(count >= 0 && count < Int.MaxValue, s"constant page declares $count levels")
        Codecs.toLevels(Codecs.block(c, ref).decode(s, count.toInt), count.toInt, ref)
      case None =>
        ref.check(s.len % 2 == 0, "raw levels of an odd byte count")
        Array.tabulate(s.len / 2)(k => LE.u16(s.a, s.off + 2 * k).toShort)
    }
  }

  private val (rep, defs): (Array[Short], Array[Short]) = {
    val first = if (hasScalar && !inline) 1 else 0
    if (nb - first < 2) (null, null)
    else if (hasScalar) (levels(first, None, 0), levels(first + 1, None, 0))
    else (
      levels(
        0,
        if (layout.hasRepCompression) Some(layout.getRepCompression) else None,
        layout.getNumRepValues
      ),
      levels(
        1,
        if (layout.hasDefCompression) Some(layout.getDefCompression) else None,
        layout.getNumDefValues
      )
    )
  }
  ref.check(
    rep == null || defs == null || rep.length == defs.length,
    s"constant page has ${rep.length} rep but ${defs.length} def levels"
  )

  private val nLevels =
    if (rep != null) rep.length else if (defs != null) defs.length else numRows.toInt
  // All-null pages without levels: every row is a null leaf item, outer layers valid.
  private val allNullDefs: Array[Short] =
    if (hasScalar || defs != null || rep != null) null
    else {
      val d = new Array[Short](nLevels);
      java.util.Arrays.fill(d, defMap.indexOf(layers.nullLevel(0).toShort).max(1).toShort); d
    }
  private val pageDefs = if (allNullDefs != null) allNullDefs else defs
  private val visible = if (pageDefs == null) nLevels else pageDefs.count(_ <= pageMaxVisibleDef)

  private var given = false
  protected def nextChunkContinuesRow: Boolean = false
  protected def nextChunk(): Chunk =
    if (given) null
    else { given = true; new Chunk(rep, pageDefs, nLevels, new ConstantValues(visible, scalar)) }

  locally {
    if (allNullDefs != null && defMap.length < 2) {
      // The page declares no nullable layer yet has no value: treat as all-null leaf items.
      throw ref.corrupt("all-null page whose layers declare no nulls")
    }
    cur = nextChunk()
    if (rowFrom > 0) walk(rowFrom.toInt, null)
  }
}
