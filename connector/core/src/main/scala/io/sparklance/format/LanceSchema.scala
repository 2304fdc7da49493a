package io.sparklance.format

import scala.jdk.CollectionConverters._

import io.sparklance.{LanceErrors, LanceException}
import io.sparklance.proto.FileProtos

/** The schema of one dataset version: top-level fields in order, plus schema metadata. */
final case class LanceSchema(fields: Seq[LanceField], metadata: Map[String, Array[Byte]]) {
  lazy val byId: Map[Int, LanceField] = fields.flatMap(_.preOrder).map(f => f.id -> f).toMap
  def field(name: String): Option[LanceField] = fields.find(_.name == name)
  def maxFieldId: Int = if (byId.isEmpty) -1 else byId.keys.max

  /** The names from the top-level field down to field `id` (None: no such field). */
  def pathOf(id: Int): Option[Seq[String]] = byId.get(id).map { f =>
    byId.get(f.parentId).flatMap(p => pathOf(p.id)).getOrElse(Nil) :+ f.name
  }
}

object LanceSchema {

  /**
   * Builds the tree from the manifest's flat, pre-order field list. Parents must come
   * before their children; a child whose parent is unknown means a corrupt manifest.
   */
  def fromProto(
      protoFields: Seq[FileProtos.Field],
      metadata: Map[String, Array[Byte]],
      source: String
  ): LanceSchema = {
    val childrenOf = scala.collection.mutable.LinkedHashMap[
      Int,
      scala.collection.mutable.ArrayBuffer[FileProtos.Field]
    ]()
    val ids = scala.collection.mutable.HashSet[Int]()
    protoFields.foreach { f =>
      if (!ids.add(f.getId))
        throw LanceErrors.corruptFile(source, s"field id ${f.getId} ('${f.getName}') appears twice")
      if (f.getParentId != -1 && !ids.contains(f.getParentId))
        throw LanceErrors.corruptFile(
          source,
          s"field '${f.getName}' (id ${f.getId}) names parent ${f.getParentId}, which does not precede it"
        )
      childrenOf.getOrElseUpdate(f.getParentId, scala.collection.mutable.ArrayBuffer.empty) += f
    }
    def build(f: FileProtos.Field): LanceField = {
      val lt =
        try LogicalType.parse(f.getLogicalType)
        catch {
          case e: LanceException =>
            throw LanceErrors.corruptFile(
              source,
              s"field '${f.getName}' (id ${f.getId}): ${e.getMessage}",
              e
            )
        }
      LanceField(
        id = f.getId,
        parentId = f.getParentId,
        name = f.getName,
        logicalType = lt,
        nullable = f.getNullable,
        metadata = f.getMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap,
        children = childrenOf.getOrElse(f.getId, Nil).map(build).toSeq
      )
    }
    LanceSchema(childrenOf.getOrElse(-1, Nil).map(build).toSeq, metadata)
  }
}
