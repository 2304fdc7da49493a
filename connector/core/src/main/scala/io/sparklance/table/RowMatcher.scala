package io.sparklance.table

import org.roaringbitmap.RoaringBitmap

import io.sparklance.storage.FileIO

/**
 * The rows of a dataset version a [[RowFilter]] matches, as row offsets per fragment (what
 * a Delete or Update records): each fragment is read through its deletion vector, decoding
 * only the filter's columns, `batchRows` rows at a time. Rows already deleted never match.
 * Runs where it is called (the driver, for a DELETE): cost grows with the filter's columns.
 */
object RowMatcher {
  def matching(
      fileIO: FileIO,
      s: Snapshot,
      filter: RowFilter,
      batchRows: Int = 8192
  ): Map[Long, RoaringBitmap] = {
    val fields = filter.columns.toSeq.sorted.map { c =>
      s.schema.field(c).getOrElse(throw io.sparklance.LanceErrors.invalidOption(
        "filter",
        c,
        s"no column '$c' in ${s.root} version ${s.version}"
      ))
    }
    val always = filter match {
      case RowFilter.Const(v) => Some(v)
      case _ => None
    }
    s.fragments.flatMap { f =>
      val ref = FragmentRef(s.root, s, f)
      val dv = DeletionVector.read(fileIO, ref)
      val hits = new RoaringBitmap()
      always match {
        case Some(false) =>
        case Some(true) =>
          hits.add(0L, ref.physicalRows)
          hits.andNot(dv.deleted)
        case None =>
          val evaluator = new RowFilterEvaluator(filter, fields.map(x => x.name -> x).toMap)
          val r = new FragmentReader(
            fileIO,
            ref,
            Nil,
            dv,
            0,
            ref.physicalRows,
            FragmentReader.Filter(evaluator, fields)
          )
          try {
            val offsets = new Array[Long](batchRows)
            while (r.remaining > 0) {
              val (_, kept) = r.next(math.min(batchRows.toLong, r.remaining).toInt)
              r.keptOffsets(offsets, kept)
              var i = 0
              while (i < kept) { hits.add(offsets(i).toInt); i += 1 }
            }
          } finally r.close()
      }
      if (hits.isEmpty) None else Some(f.getId -> hits)
    }.toMap
  }
}
