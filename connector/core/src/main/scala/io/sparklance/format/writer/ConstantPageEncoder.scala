package io.sparklance.format.writer

import io.sparklance.proto.EncodingsV21Protos._

/**
 * 2.2 constant pages: when every valid value of a page is the same (nulls allowed), pylance
 * 14.0.2 writes a `ConstantLayout` holding that value instead of the values: inline when it
 * is one fixed-width value of at most 32 bytes (a boolean as one byte, 0 or 1), else as a
 * scalar value buffer `u32 2 | u32 offsets_len | u32 data_len | offsets [0, len] | bytes`
 * (the Arrow buffers of a one-string array). Rep/def levels, when the page has any, follow
 * as raw u16 buffers. Fixed-size lists never take this path.
 */
private[writer] object ConstantPageEncoder {
  private val InlineMaxBytes = 32

  /** Writes the page as a constant page and returns true, or returns false when it is not constant. */
  def tryWrite(w: StructuralLeafWriter, levels: PageLevels): Boolean = {
    val vals = w.pageValues
    val first = firstValid(w)
    if (first < 0) return false
    vals match {
      case _: FixedValuesBuf | _: VarValuesBuf =>
      case _ => return false
    }
    if (!allValidEqual(w, first)) return false

    val b = ConstantLayout.newBuilder()
    levels.layers.foreach(b.addLayers)
    val value: ByteBuf = vals match {
      case f: FixedValuesBuf =>
        val bytes =
          java.util.Arrays.copyOfRange(f.data.array, first * f.width, (first + 1) * f.width)
        if (f.width <= InlineMaxBytes) {
          b.setInlineValue(com.google.protobuf.ByteString.copyFrom(if (f.bool)
            Array[Byte]((if (bytes(0) != 0) 1 else 0).toByte)
          else bytes))
          null
        } else { val vb = new ByteBuf(f.width + 16); scalarBuffer(vb, Seq(bytes)); vb }
      case v: VarValuesBuf =>
        val s = v.offsets(first); val len = v.offsets(first + 1) - s
        val offs = new ByteBuf(16)
        if (v.large) { offs.u64(0); offs.u64(len.toLong) }
        else { offs.u32(0); offs.u32(len.toLong) }
        val vb = new ByteBuf(len + 32)
        scalarBuffer(vb, Seq(offs.toArray, java.util.Arrays.copyOfRange(v.data.array, s, s + len)))
        vb
      case _ => return false
    }
    val rep = w.repLevels
    val pageDefs = levels.pageDefs(w.canonicalDefs, 0, w.levelCount)
    val buffers =
      if (rep == null && pageDefs == null) Option(value).toSeq
      else {
        val n = w.levelCount
        val rb = new ByteBuf(2 * n + 8)
        if (rep != null) { var i = 0; while (i < n) { rb.u16(rep(i)); i += 1 } }
        val db = new ByteBuf(2 * n + 8)
        if (pageDefs != null) { var i = 0; while (i < n) { db.u16(pageDefs(i)); i += 1 } }
        Option(value).toSeq ++ Seq(rb, db)
      }
    w.emit(buffers, PageLayout.newBuilder().setConstantLayout(b).build())
    true
  }

  private def scalarBuffer(out: ByteBuf, bufs: Seq[Array[Byte]]): Unit = {
    out.u32(bufs.size.toLong)
    bufs.foreach(b => out.u32(b.length.toLong))
    bufs.foreach(b => out.bytes(b))
  }

  /** Index (among the page's visible values) of the first valid value, or -1. */
  private def firstValid(w: StructuralLeafWriter): Int = {
    val canon = w.canonicalDefs
    if (canon == null) return if (w.pageValues.count > 0) 0 else -1
    val mv = w.leafPath.maxVisibleDef
    var v = 0; var i = 0
    while (i < w.levelCount) {
      val d = canon(i)
      if (d == 0) return v
      if (d <= mv) v += 1
      i += 1
    }
    -1
  }

  /**
   * Whether every valid visible value equals value `first` (null items hold placeholders and
   * are skipped). Values are compared as the levels are walked, so a page of differing values
   * is known after a few of them.
   */
  private def allValidEqual(w: StructuralLeafWriter, first: Int): Boolean =
    w.pageValues match {
      case f: FixedValuesBuf =>
        val a = f.data.array; val wd = f.width; val s = first * wd
        everyValid(w)(v => java.util.Arrays.equals(a, s, s + wd, a, v * wd, v * wd + wd))
      case b: VarValuesBuf =>
        val a = b.data.array; val o = b.offsets.array; val s = o(first); val e = o(first + 1)
        everyValid(w)(v => java.util.Arrays.equals(a, s, e, a, o(v), o(v + 1)))
      case _ => false
    }

  /** Whether `same(v)` holds for each valid visible value `v`, in order (false at the first not). */
  private def everyValid(w: StructuralLeafWriter)(same: Int => Boolean): Boolean = {
    val canon = w.canonicalDefs
    if (canon == null) {
      val n = w.pageValues.count
      var v = 0
      while (v < n) { if (!same(v)) return false; v += 1 }
    } else {
      val mv = w.leafPath.maxVisibleDef
      val levels = w.levelCount
      var v = 0; var i = 0
      while (i < levels) {
        val d = canon(i)
        if (d <= mv) { if (d == 0 && !same(v)) return false; v += 1 }
        i += 1
      }
    }
    true
  }
}
