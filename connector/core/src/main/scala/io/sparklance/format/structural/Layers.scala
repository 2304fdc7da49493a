package io.sparklance.format.structural

import io.sparklance.proto.EncodingsV21Protos.RepDefLayer

/**
 * The rep/def layer structure of one leaf column as the schema says it must be: one layer
 * per field on the path from the leaf up to the top-level field, innermost first; a layer is
 * either an item (leaf or struct) or a list (list, large list, map).
 *
 * A fixed-size list of structs (2.2) is an item layer too, one that repeats every level below
 * it `dimension` times (`fslDim(j)` > 0): its leaves carry rows x dimension levels, and their
 * pages count rows in those units. Only such layers with no list above them exist (pylance
 * 14.0.2 cannot write a list around a fixed-size list of structs), so a leaf's levels hold
 * exactly [[itemsPerRow]] "rows" per top-level row.
 *
 * Pages may declare weaker meanings for the same layers (a page without nulls says
 * ALL_VALID_ITEM where another says NULLABLE_ITEM), so every page's definition levels are
 * translated into one canonical numbering in which every item layer is nullable and every
 * list layer both nullable and emptyable: item layer j owns one level (null), list layer j
 * two (null, then empty). That keeps batches spanning pages uniform.
 */
private[structural] final class Layers(val isList: Array[Boolean], val fslDim: Array[Int]) {
  def this(isList: Array[Boolean]) = this(isList, new Array[Int](isList.length))
  require(fslDim.length == isList.length && fslDim.indices.forall(j =>
    fslDim(j) == 0 || !isList(j) && fslDim(j) > 0
  ))
  val numLayers: Int = isList.length

  /** Level rows per top-level row: the product of the fixed-size list dimensions. */
  val itemsPerRow: Long = fslDim.iterator.filter(_ > 0).map(_.toLong).product
  val hasFsl: Boolean = itemsPerRow != 1 || fslDim.exists(_ > 0)
  val maxRep: Int = isList.count(identity)

  /** Canonical def level of "layer j is null"; "empty" is that + 1 for lists. */
  val nullLevel: Array[Int] = {
    val a = new Array[Int](numLayers); var next = 1; var j = 0
    while (j < numLayers) { a(j) = next; next += (if (isList(j)) 2 else 1); j += 1 }
    a
  }
  val maxDef: Int =
    if (numLayers == 0) 0 else nullLevel(numLayers - 1) + (if (isList(numLayers - 1)) 1 else 0)

  /** For each canonical def: the layer it makes null/empty (-1 for 0 = valid). */
  val owner: Array[Int] = {
    val a = new Array[Int](maxDef + 1); a(0) = -1; var j = 0
    while (j < numLayers) { a(nullLevel(j)) = j; if (isList(j)) a(nullLevel(j) + 1) = j; j += 1 }
    a
  }
  val isEmptyLevel: Array[Boolean] = {
    val a = new Array[Boolean](maxDef + 1); var j = 0
    while (j < numLayers) { if (isList(j)) a(nullLevel(j) + 1) = true; j += 1 }
    a
  }

  /** Items with canonical def at most this own a value slot (nothing between them and the leaf is a list). */
  val maxVisibleDef: Int = {
    val firstList = isList.indexWhere(identity)
    if (firstList < 0) maxDef else if (firstList == 0) 0 else nullLevel(firstList - 1)
  }

  /** Layer index of the q-th list counted from the innermost (q = 1..maxRep). */
  val listLayer: Array[Int] = {
    val a = new Array[Int](maxRep + 2); var q = 0; var j = 0
    while (j < numLayers) { if (isList(j)) { q += 1; a(q) = j }; j += 1 }
    a(maxRep + 1) = numLayers
    a
  }

  /**
   * Translation of one page's layer meanings into canonical def levels: `map(pageDef)`.
   * Fails when the page's layers do not match the schema's shape.
   */
  def pageDefMap(page: Array[RepDefLayer], ref: PageRef): Array[Short] = {
    ref.check(
      page.length == numLayers,
      s"page has ${page.length} rep/def layers but the schema path has $numLayers"
    )
    val map = scala.collection.mutable.ArrayBuffer[Short](0)
    var j = 0
    while (j < numLayers) {
      val l = page(j)
      val list = l == RepDefLayer.REPDEF_ALL_VALID_LIST || l == RepDefLayer.REPDEF_NULLABLE_LIST ||
        l == RepDefLayer.REPDEF_EMPTYABLE_LIST || l == RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST
      ref.check(
        list == isList(j),
        s"rep/def layer $j is $l but the schema has ${if (isList(j)) "a list" else "an item"} there"
      )
      l match {
        case RepDefLayer.REPDEF_ALL_VALID_ITEM | RepDefLayer.REPDEF_ALL_VALID_LIST =>
        case RepDefLayer.REPDEF_NULLABLE_ITEM | RepDefLayer.REPDEF_NULLABLE_LIST =>
          map += nullLevel(j).toShort
        case RepDefLayer.REPDEF_EMPTYABLE_LIST => map += (nullLevel(j) + 1).toShort
        case RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST =>
          map += nullLevel(j).toShort; map += (nullLevel(j) + 1).toShort
        case other => throw ref.corrupt(s"unknown rep/def layer $other")
      }
      j += 1
    }
    map.toArray
  }
}
