package io.sparklance.format.structural

/**
 * What one leaf column contributes to a batch: repetition levels (when the path has lists),
 * canonical definition levels (materialized only once some level is non-zero) and the values
 * of the visible items, accumulated across pages and chunks.
 */
private[structural] final class LeafBatch(val layers: Layers, val values: ValuesBuilder) {
  val maxRep: Int = layers.maxRep
  var rep: Array[Short] = if (maxRep > 0) new Array[Short](1024) else null
  var defs: Array[Short] = null
  var n = 0

  def reset(): Unit = { n = 0; defs = null; values.reset() }

  private def ensure(more: Int): Unit = {
    val need = n + more
    if (rep != null && need > rep.length)
      rep = java.util.Arrays.copyOf(rep, math.max(need, rep.length * 2))
    if (defs != null && need > defs.length)
      defs = java.util.Arrays.copyOf(defs, math.max(need, defs.length * 2))
  }
  private def materializeDefs(more: Int): Unit =
    if (defs == null) defs = new Array[Short](math.max(n + more, 1024))

  /**
   * Appends levels [from, until): `r` (or null: every level starts a row), page def levels
   * `d` translated through `defMap` (or null: all valid).
   */
  def appendLevels(
      r: Array[Short],
      d: Array[Short],
      defMap: Array[Short],
      from: Int,
      until: Int
  ): Unit = {
    val k = until - from
    if (k <= 0) return
    if (d != null && defs == null) {
      var any = false; var i = from
      while (i < until && !any) { any = d(i) != 0; i += 1 }
      if (any) materializeDefs(k)
    }
    ensure(k)
    if (rep != null) {
      if (r != null) System.arraycopy(r, from, rep, n, k)
      else java.util.Arrays.fill(rep, n, n + k, maxRep.toShort)
    }
    if (defs != null) {
      if (d == null) java.util.Arrays.fill(defs, n, n + k, 0.toShort)
      else {
        var i = 0
        while (i < k) { defs(n + i) = defMap(d(from + i)); i += 1 }
      }
    }
    n += k
  }

  /** Appends `k` levels that all carry canonical def `canonicalDef` (all-null pages). */
  def appendConstantLevels(k: Int, canonicalDef: Int): Unit = {
    if (canonicalDef != 0) materializeDefs(k)
    ensure(k)
    if (rep != null) java.util.Arrays.fill(rep, n, n + k, maxRep.toShort)
    if (defs != null) java.util.Arrays.fill(defs, n, n + k, canonicalDef.toShort)
    n += k
  }
}
