package io.sparklance.spark

import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Internal scan options the optimizer rules set on a Lance relation for its scan builder
 * ([[KeepFiltersForPruning]]'s mark, [[LikePushDown]]'s patterns): never user options.
 */
private[spark] object RelationMarks {

  /** `r` with scan option `key` set to `value`. */
  def withOption(r: DataSourceV2Relation, key: String, value: String): DataSourceV2Relation = {
    val all = new java.util.HashMap[String, String](r.options.asCaseSensitiveMap())
    all.put(key, value)
    val options = new CaseInsensitiveStringMap(all)
    // Rebuilt from its own fields (not `copy`), as the relation gains fields across Spark lines.
    r.makeCopy(r.productIterator.map {
      case _: CaseInsensitiveStringMap => options
      case other => other.asInstanceOf[AnyRef]
    }.toArray).asInstanceOf[DataSourceV2Relation]
  }
}
