package io.sparklance.spark;

import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.catalog.SessionConfigSupport;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The class Spark finds through {@code META-INF/services} for {@code format("lance")}.
 *
 * <p>Written in Java on purpose: Java's ServiceLoader instantiates every registered data
 * source whenever any format is looked up, so an exception here would break Parquet, CSV and
 * JSON for the whole session. A Scala class compiled for another Spark line or Scala version
 * fails in its constructor ({@code NoSuchMethodError: CreatableRelationProvider.$init$}); this
 * class uses only interfaces that every supported line has, with the same signatures, and
 * does nothing until it is used. Every use first checks that the jar was built for the running
 * Spark line ({@link SparkLineCheck}), then hands the call to the Scala {@link LanceProvider}.
 */
public final class LanceDataSource
    implements DataSourceRegister, TableProvider, SessionConfigSupport, CreatableRelationProvider {

  private LanceProvider provider;

  @Override
  public String shortName() {
    return "lance";
  }

  /** Session confs {@code spark.datasource.lance.<option>} are defaults for reader options. */
  @Override
  public String keyPrefix() {
    return "lance";
  }

  private synchronized LanceProvider provider() {
    if (provider == null) {
      SparkLineCheck.require();
      provider = new LanceProvider();
    }
    return provider;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return provider().inferSchema(options);
  }

  /** True so that saving to a path with no dataset yet does not infer (and fail on) its schema. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return provider().getTable(schema, partitioning, properties);
  }

  @Override
  public BaseRelation createRelation(
      SQLContext sqlContext,
      SaveMode mode,
      scala.collection.immutable.Map<String, String> parameters,
      Dataset<Row> data) {
    return provider().createRelation(sqlContext, mode, parameters, data);
  }

  /**
   * Spark 4 asks a {@code CreatableRelationProvider} which types it can save (Spark 3.5 has no
   * such method, so no {@code @Override}): every type reaches the V2 write, which maps it to
   * Lance or fails naming the column.
   */
  public boolean supportsDataType(DataType dataType) {
    return true;
  }
}
