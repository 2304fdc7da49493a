package io.sparklance.format.codec

import io.sparklance.LanceErrors

/** FSST string decompression (symbol table of Lance's FSST implementation). */
object Fsst {
  /**
   * Decompresses `n` values whose compressed bytes are `codes[offsets(i), offsets(i+1))`.
   * Returns (offsets of n+1 entries, data).
   */
  def decompress(symbolTable: Array[Byte], codes: Array[Byte], offsets: Array[Int], n: Int): (Array[Int], Array[Byte]) =
    throw LanceErrors.unsupported("FSST decompression is not implemented yet")
}
