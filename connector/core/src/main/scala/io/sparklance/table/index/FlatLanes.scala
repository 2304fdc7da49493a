package io.sparklance.table.index

/**
 * f32 dot products and squared distances summed as Lance's SIMD kernels sum them (found against
 * pylance 14.0.2's flat storage on vectors of 8, 12, 16, 24 and 32 dimensions and its PQ
 * storage on sub-vectors of 2, 4 and 16, every repaired edge's distance reproduced bit for
 * bit). Lanes are added pairwise across halves (lane i with lane i + 4, then
 * i with i + 2, then the two; sixteen lanes first i with i + 8); products are added to lanes
 * with fused multiply-adds; a last partial chunk's products are summed in order. Those are
 * its AVX2 kernels; on a CPU with AVX-512F it runs others ([[Wide]]), so distances follow the
 * CPU as pylance's do.
 */
private[index] object FlatLanes {

  /**
   * Whether pylance on this machine runs its AVX-512 kernels, which sum in sixteen lanes
   * ([[Wide]]): it picks them when the CPU has AVX-512F (x86-64 Linux: `/proc/cpuinfo`'s
   * flags). The system property `sparklance.simd.avx512` (`true`/`false`) overrides.
   */
  val avx512: Boolean = Option(System.getProperty("sparklance.simd.avx512")) match {
    case Some(v) => v.trim.equalsIgnoreCase("true")
    case None =>
      val arch = System.getProperty("os.arch", "")
      (arch == "amd64" || arch == "x86_64") && scala.util.Try {
        val src = scala.io.Source.fromFile("/proc/cpuinfo")
        try src.getLines().exists(l =>
            l.startsWith("flags") &&
              l.split("\\s+").contains("avx512f")
          )
        finally src.close()
      }.getOrElse(false)
  }

  /**
   * The dot kernel (dot distances, and the squared norms of cosine distances): eight lanes
   * over the chunks of eight, reduced, added to the partial chunk's sum (on AVX-512:
   * [[Wide.dot]]).
   */
  def dot(x: Array[Float], i: Int, y: Array[Float], j: Int, dim: Int): Float = {
    if (avx512) return Wide.dot(x, i, y, j, dim)
    val full = dim / 8 * 8
    val rem = partial(x, i, y, j, full, dim)
    if (full == 0) return rem
    var l0 = 0f; var l1 = 0f; var l2 = 0f; var l3 = 0f
    var l4 = 0f; var l5 = 0f; var l6 = 0f; var l7 = 0f
    var k = 0
    while (k < full) {
      val a = i + k
      val b = j + k
      l0 = Math.fma(x(a), y(b), l0); l1 = Math.fma(x(a + 1), y(b + 1), l1)
      l2 = Math.fma(x(a + 2), y(b + 2), l2); l3 = Math.fma(x(a + 3), y(b + 3), l3)
      l4 = Math.fma(x(a + 4), y(b + 4), l4); l5 = Math.fma(x(a + 5), y(b + 5), l5)
      l6 = Math.fma(x(a + 6), y(b + 6), l6); l7 = Math.fma(x(a + 7), y(b + 7), l7)
      k += 8
    }
    rem + (((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)))
  }

  /**
   * The L2 kernel: squared differences `d` added to eight lanes (`fma(d, d, lane)`) over the
   * chunks of eight, reduced, added to the partial chunk's sum of squares (on AVX-512:
   * [[Wide.l2]]).
   */
  def l2(x: Array[Float], i: Int, y: Array[Float], j: Int, dim: Int): Float = {
    if (avx512) return Wide.l2(x, i, y, j, dim)
    val full = dim / 8 * 8
    var rem = 0f
    var k = full
    while (k < dim) { val d = x(i + k) - y(j + k); rem += d * d; k += 1 }
    if (full == 0) return rem
    var l0 = 0f; var l1 = 0f; var l2 = 0f; var l3 = 0f
    var l4 = 0f; var l5 = 0f; var l6 = 0f; var l7 = 0f
    k = 0
    while (k < full) {
      val a = i + k
      val b = j + k
      var d = x(a) - y(b); l0 = Math.fma(d, d, l0)
      d = x(a + 1) - y(b + 1); l1 = Math.fma(d, d, l1)
      d = x(a + 2) - y(b + 2); l2 = Math.fma(d, d, l2)
      d = x(a + 3) - y(b + 3); l3 = Math.fma(d, d, l3)
      d = x(a + 4) - y(b + 4); l4 = Math.fma(d, d, l4)
      d = x(a + 5) - y(b + 5); l5 = Math.fma(d, d, l5)
      d = x(a + 6) - y(b + 6); l6 = Math.fma(d, d, l6)
      d = x(a + 7) - y(b + 7); l7 = Math.fma(d, d, l7)
      k += 8
    }
    rem + (((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)))
  }

  /**
   * The `x·y` of Lance's cosine kernel: sixteen lanes over the chunks of sixteen, reduced; then
   * eight lanes over at most one chunk of eight, reduced; those two added, then the partial
   * chunk's sum. `lanes` is scratch of 16 floats.
   */
  def cosineDot(
      x: Array[Float],
      i: Int,
      y: Array[Float],
      j: Int,
      dim: Int,
      lanes: Array[Float]
  ): Float = {
    if (avx512) return Wide.cosineDot(x, i, y, j, dim)
    val wide = dim / 16 * 16
    val full = dim / 8 * 8
    java.util.Arrays.fill(lanes, 0f)
    var k = 0
    while (k < wide) {
      var l = 0
      while (l < 16) { lanes(l) = Math.fma(x(i + k + l), y(j + k + l), lanes(l)); l += 1 }
      k += 16
    }
    var l = 0
    while (l < 8) { lanes(l) += lanes(l + 8); l += 1 }
    val r16 = reduce8(lanes)
    java.util.Arrays.fill(lanes, 0f)
    while (k < full) {
      l = 0
      while (l < 8) { lanes(l) = Math.fma(x(i + k + l), y(j + k + l), lanes(l)); l += 1 }
      k += 8
    }
    (r16 + reduce8(lanes)) + partial(x, i, y, j, full, dim)
  }

  /**
   * The kernels pylance 14.0.2 runs on a CPU with AVX-512F (found against it on such a machine,
   * every repaired edge's distance of flat and PQ storages reproduced bit for bit): sixteen
   * lanes with fused multiply-adds over the chunks of sixteen, reduced (lane i added to lane
   * i + 8, then as eight lanes); the products of the rest summed in order, apart ([[dot]],
   * [[l2]]) or onto the reduced sum ([[cosineDot]]).
   */
  object Wide {
    private val scratch = ThreadLocal.withInitial[Array[Float]](() => new Array[Float](16))

    def dot(x: Array[Float], i: Int, y: Array[Float], j: Int, dim: Int): Float = {
      val full = dim / 16 * 16
      lanesDot(x, i, y, j, full) + partial(x, i, y, j, full, dim)
    }

    def l2(x: Array[Float], i: Int, y: Array[Float], j: Int, dim: Int): Float = {
      val full = dim / 16 * 16
      val lanes = zeroed()
      var k = 0
      while (k < full) {
        var l = 0
        while (l < 16) {
          val d = x(i + k + l) - y(j + k + l)
          lanes(l) = Math.fma(d, d, lanes(l))
          l += 1
        }
        k += 16
      }
      var rem = 0f
      while (k < dim) { val d = x(i + k) - y(j + k); rem += d * d; k += 1 }
      (if (full == 0) 0f else reduce16(lanes)) + rem
    }

    def cosineDot(x: Array[Float], i: Int, y: Array[Float], j: Int, dim: Int): Float = {
      val full = dim / 16 * 16
      var sum = lanesDot(x, i, y, j, full)
      var k = full
      while (k < dim) { sum += x(i + k) * y(j + k); k += 1 }
      sum
    }

    /** The reduced sixteen lanes of the products up to `full` (0 when `full` is 0). */
    private def lanesDot(x: Array[Float], i: Int, y: Array[Float], j: Int, full: Int): Float = {
      if (full == 0) return 0f
      val lanes = zeroed()
      var k = 0
      while (k < full) {
        var l = 0
        while (l < 16) { lanes(l) = Math.fma(x(i + k + l), y(j + k + l), lanes(l)); l += 1 }
        k += 16
      }
      reduce16(lanes)
    }

    private def zeroed(): Array[Float] = {
      val l = scratch.get()
      java.util.Arrays.fill(l, 0f)
      l
    }

    private def reduce16(l: Array[Float]): Float = {
      var m = 0
      while (m < 8) { l(m) += l(m + 8); m += 1 }
      reduce8(l)
    }
  }

  private def reduce8(l: Array[Float]): Float =
    ((l(0) + l(4)) + (l(2) + l(6))) + ((l(1) + l(5)) + (l(3) + l(7)))

  /** The products from `from` to `dim`, summed in order. */
  private def partial(
      x: Array[Float],
      i: Int,
      y: Array[Float],
      j: Int,
      from: Int,
      dim: Int
  ): Float = {
    var rem = 0f
    var k = from
    while (k < dim) { rem += x(i + k) * y(j + k); k += 1 }
    rem
  }
}
