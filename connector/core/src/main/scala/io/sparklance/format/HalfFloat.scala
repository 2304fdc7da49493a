package io.sparklance.format

/** IEEE 754 half precision to float, exactly (every half value is a float value). */
object HalfFloat {
  def toFloat(h: Short): Float = {
    val bits = h & 0xffff
    val sign = (bits >>> 15) << 31
    val exp = (bits >>> 10) & 0x1f
    val mant = bits & 0x3ff
    if (exp == 0) {
      val mag = mant * (1.0f / (1 << 24)) // subnormal: mant * 2^-24
      if (sign != 0) -mag else mag
    } else if (exp == 31) {
      java.lang.Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13))
    } else {
      java.lang.Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13))
    }
  }
}
