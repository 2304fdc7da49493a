package io.sparklance.spark

import java.util

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SessionConfigSupport, Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * `spark.read.format("lance")`. The schema always comes from the dataset's manifest, so a
 * user-specified schema is refused by Spark (supportsExternalMetadata = false).
 * Session confs `spark.datasource.lance.<option>` act as defaults for reader options.
 */
class LanceDataSource extends TableProvider with DataSourceRegister with SessionConfigSupport {
  override def shortName(): String = "lance"
  override def keyPrefix(): String = "lance"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = LanceTables.load(session, options).schema()

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table =
    LanceTables.load(session, new CaseInsensitiveStringMap(properties))

  private def session: SparkSession = SparkSession.active
}
