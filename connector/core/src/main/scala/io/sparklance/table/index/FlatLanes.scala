package io.sparklance.table.index

/**
 * Lance's f32 products summed as its 8-lane kernels sum them (found against pylance 14.0.2's
 * flat storage on 8-, 12- and 16-dimensional vectors): the products of a last partial chunk
 * summed in order; each lane summed over the chunks of eight (`fused`: each product added
 * with a fused multiply-add, as Lance's dot kernel and the norms of its cosine distances do;
 * else rounded, then added); the lanes added pairwise across halves (lane i with lane i + 4,
 * then i with i + 2, then the two); the partial chunk's sum added last.
 */
private[index] object FlatLanes {
  /** The sum of `x(i + k) * y(j + k)` for `k < dim`, as Lance's kernels add it. */
  def sum(x: Array[Float], i: Int, y: Array[Float], j: Int, dim: Int, fused: Boolean): Float = {
    val full = dim / 8 * 8
    var rem = 0f
    var k = full
    while (k < dim) { rem += x(i + k) * y(j + k); k += 1 }
    if (full == 0) return rem
    var l0 = 0f; var l1 = 0f; var l2 = 0f; var l3 = 0f
    var l4 = 0f; var l5 = 0f; var l6 = 0f; var l7 = 0f
    k = 0
    if (fused) while (k < full) {
      val a = i + k
      val b = j + k
      l0 = Math.fma(x(a), y(b), l0); l1 = Math.fma(x(a + 1), y(b + 1), l1)
      l2 = Math.fma(x(a + 2), y(b + 2), l2); l3 = Math.fma(x(a + 3), y(b + 3), l3)
      l4 = Math.fma(x(a + 4), y(b + 4), l4); l5 = Math.fma(x(a + 5), y(b + 5), l5)
      l6 = Math.fma(x(a + 6), y(b + 6), l6); l7 = Math.fma(x(a + 7), y(b + 7), l7)
      k += 8
    } else while (k < full) {
      val a = i + k
      val b = j + k
      l0 += x(a) * y(b); l1 += x(a + 1) * y(b + 1); l2 += x(a + 2) * y(b + 2)
      l3 += x(a + 3) * y(b + 3); l4 += x(a + 4) * y(b + 4); l5 += x(a + 5) * y(b + 5)
      l6 += x(a + 6) * y(b + 6); l7 += x(a + 7) * y(b + 7)
      k += 8
    }
    rem + (((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)))
  }
}
