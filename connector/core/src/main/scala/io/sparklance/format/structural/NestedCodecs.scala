package io.sparklance.format.structural

import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos

import scala.jdk.CollectionConverters._

/*
 * Values of nested fixed shapes stored as one column: fixed-size lists (with validity per
 * nullable layer) and packed structs, fixed-width or variable.
 * [[Codecs]] picks these from a page's encodings.
 */

private[structural] final class FslMini(d: Codecs.FslDesc, ref: PageRef) extends MiniBlockCodec {
  // pylance 14.0.2 sends all-null FSL items to full-zip only (its mini-block FSL encoder has no
  // all-null case), so there is no mini-block layout to follow.
  if (d.allNullItems)
    throw ref.unsupported("mini-block fixed-size lists with all-null (constant) items")
  def numBuffers: Int = 1 + d.validity.count(identity)
  def decode(bufs: Array[Slice], n: Int): Values = {
    var bi = 0
    val nulls = new Array[Array[Boolean]](d.dims.length)
    var cum = n.toLong
    var k = 0
    while (k < d.dims.length) {
      cum *= d.dims(k)
      ref.check(cum < Int.MaxValue, "fixed-size list too large")
      if (d.validity(k)) {
        val b = bufs(bi); bi += 1
        ref.check(
          b.len.toLong * 8 >= cum,
          s"fixed-size list validity of ${b.len} bytes for $cum items"
        )
        nulls(k) = Codecs.bitsToNulls(b.a, b.off, cum.toInt)
      }
      k += 1
    }
    val items = FlatMini.decode(bufs(bi), cum.toInt, d.itemBits, ref)
    Codecs.nestFsl(d, n, nulls, items)
  }
}

private[structural] final class FslBlock(d: Codecs.FslDesc, ref: PageRef) extends BlockCodec {
  private val pv = new FslPerValue(d, ref)
  def decode(buf: Slice, n: Int): Values = {
    ref.check(
      buf.len.toLong >= n.toLong * pv.bytesPerValue,
      s"fixed-size list block of ${buf.len} bytes for $n values"
    )
    pv.decode(buf, n)
  }
}

/** Each value: a validity bitmap per nullable FSL layer (ceil(items/8) bytes), then the item bytes. */
private[structural] final class FslPerValue(d: Codecs.FslDesc, ref: PageRef)
    extends FixedPerValueCodec {
  private val cumDims: Array[Int] = d.dims.scanLeft(1)(_ * _).tail
  private val total = cumDims.last
  private val validityBytes =
    d.validity.indices.filter(d.validity).map(k => (cumDims(k) + 7) / 8).sum
  ref.check(
    d.itemBits % 8 == 0 || validityBytes == 0,
    "nullable fixed-size list of bit-packed items"
  )
  private val dataBytes =
    if (d.itemBits % 8 == 0) total * (d.itemBits / 8) else (total * d.itemBits + 7) / 8
  val bytesPerValue: Int = validityBytes + dataBytes
  ref.check(bytesPerValue > 0, "fixed-size list values of 0 bytes")
  def decode(buf: Slice, n: Int): Values = {
    if (d.allNullItems) {
      // Only validity bytes are stored; whatever they say, every item is null (pylance reads
      // them as an all-null child). The outer layers' validity still comes from the bytes.
      val nulls = readValidity(buf, n)
      val last = d.dims.length - 1
      val itemNulls = new Array[Boolean](n * total); java.util.Arrays.fill(itemNulls, true)
      nulls(last) = itemNulls
      return Codecs.nestFsl(d, n, nulls, new ConstantValues(n * total, null))
    }
    if (validityBytes == 0) {
      val items = FlatMini.decode(buf, n * total, d.itemBits, ref)
      return Codecs.nestFsl(d, n, new Array[Array[Boolean]](d.dims.length), items)
    }
    val nulls = d.dims.indices.map(k =>
      if (d.validity(k)) new Array[Boolean](n * cumDims(k)) else null
    ).toArray
    val data = new Array[Byte](n * dataBytes)
    var i = 0; var p = buf.off
    while (i < n) {
      var k = 0
      while (k < d.dims.length) {
        if (d.validity(k)) {
          val c = cumDims(k); var j = 0
          while (j < c) {
            nulls(k)(i * c + j) = ((buf.a(p + (j >>> 3)) >>> (j & 7)) & 1) == 0; j += 1
          }
          p += (c + 7) / 8
        }
        k += 1
      }
      System.arraycopy(buf.a, p, data, i * dataBytes, dataBytes); p += dataBytes
      i += 1
    }
    Codecs.nestFsl(d, n, nulls, new FixedValues(n * total, d.itemBits / 8, data, 0))
  }

  /** The validity bitmaps of rows with no item bytes (all-null items), one array per nullable layer. */
  private def readValidity(buf: Slice, n: Int): Array[Array[Boolean]] = {
    ref.check(
      buf.len.toLong >= n.toLong * bytesPerValue,
      s"fixed-size list buffer of ${buf.len} bytes for $n rows"
    )
    val nulls = d.dims.indices.map(k =>
      if (d.validity(k)) new Array[Boolean](n * cumDims(k)) else null
    ).toArray
    var i = 0; var p = buf.off
    while (i < n) {
      var k = 0
      while (k < d.dims.length) {
        if (d.validity(k)) {
          val c = cumDims(k); val a = nulls(k); var j = 0
          while (j < c) { a(i * c + j) = ((buf.a(p + (j >>> 3)) >>> (j & 7)) & 1) == 0; j += 1 }
          p += (c + 7) / 8
        }
        k += 1
      }
      i += 1
    }
    nulls
  }
}

/** Rows of fixed-width fields packed one after the other. */
private[structural] final class PackedStructMini(widths: Array[Int], ref: PageRef)
    extends MiniBlockCodec {
  private val row = widths.sum
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    ref.check(
      b.len.toLong >= n.toLong * row,
      s"packed struct buffer of ${b.len} bytes for $n rows of $row bytes"
    )
    var fieldOff = 0
    val children = widths.map { w =>
      val out = new Array[Byte](n * w)
      var i = 0; var src = b.off + fieldOff
      while (i < n) { System.arraycopy(b.a, src, out, i * w, w); src += row; i += 1 }
      fieldOff += w
      new FixedValues(n, w, out, 0): Values
    }
    new StructValues(n, children)
  }
}

/** Each value: fixed fields as raw bytes, variable fields as a length prefix and bytes, in field order. */
private[structural] final class VariablePackedStructPerValue(
    desc: EncodingsV21Protos.VariablePackedStruct,
    ref: PageRef
) extends VarPerValueCodec {
  private val fields = desc.getFieldsList.asScala.toArray
  // width > 0: fixed bytes; width < 0: -(length prefix bytes)
  private val widths: Array[Int] = fields.map { f =>
    if (f.hasBitsPerValue) {
      ref.check(
        f.getBitsPerValue % 8 == 0 && f.getBitsPerValue > 0,
        s"packed field of ${f.getBitsPerValue} bits"
      )
      (f.getBitsPerValue / 8).toInt
    } else {
      ref.check(
        f.getBitsPerLength == 32 || f.getBitsPerLength == 64,
        s"packed field length of ${f.getBitsPerLength} bits"
      )
      -(f.getBitsPerLength / 8).toInt
    }
  }
  private val fixedCodecs =
    fields.map(f => if (f.hasBitsPerValue) Codecs.fixedPerValue(f.getValue, ref) else null)
  private val varCodecs =
    fields.map(f => if (!f.hasBitsPerValue) Codecs.varPerValue(f.getValue, ref) else null)

  def decode(raw: VarValues): Values = {
    val n = raw.count
    val fixedOut = widths.map(w => if (w > 0) new Array[Byte](n * w) else null)
    val varOffs = widths.map(w => if (w < 0) new Array[Int](n + 1) else null)
    val varData = widths.map(w => if (w < 0) new java.io.ByteArrayOutputStream() else null)
    var i = 0
    while (i < n) {
      var p = raw.offsets(raw.offOff + i); val end = raw.offsets(raw.offOff + i + 1)
      val empty = p == end
      var k = 0
      while (k < widths.length) {
        val w = widths(k)
        if (w > 0) {
          if (!empty) {
            ref.check(p + w <= end, "packed struct fixed field exceeds its row");
            System.arraycopy(raw.data, p, fixedOut(k), i * w, w); p += w
          }
        } else {
          if (!empty) {
            ref.check(p - w <= end, "packed struct length prefix exceeds its row")
            val len = LE.uint(raw.data, p, -w); p -= w
            ref.check(
              len >= 0 && p + len <= end,
              s"packed struct field of $len bytes exceeds its row"
            )
            varData(k).write(raw.data, p, len.toInt); p += len.toInt
          }
          varOffs(k)(i + 1) = varData(k).size()
        }
        k += 1
      }
      i += 1
    }
    val children = widths.indices.map { k =>
      if (widths(k) > 0) fixedCodecs(k).decode(Slice.of(fixedOut(k)), n)
      else varCodecs(k).decode(new VarValues(n, varOffs(k), 0, varData(k).toByteArray))
    }.toArray
    new StructValues(n, children)
  }
}
