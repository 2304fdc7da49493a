package io.sparklance.format

/**
 * One field of a Lance schema, as a tree. `id` is the dataset-wide field id that data files
 * refer to; children of structs, lists and maps are nested here (Lance stores them flat,
 * pre-order, linked by `parent_id`).
 */
final case class LanceField(
    id: Int,
    parentId: Int,
    name: String,
    logicalType: LogicalType,
    nullable: Boolean,
    metadata: Map[String, Array[Byte]],
    children: Seq[LanceField]
) {

  def metadataString(key: String): Option[String] = metadata.get(key).map(new String(_, "UTF-8"))

  /** This field and all its descendants, pre-order. */
  def preOrder: Seq[LanceField] = this +: children.flatMap(_.preOrder)

  def isLeaf: Boolean = children.isEmpty
}
