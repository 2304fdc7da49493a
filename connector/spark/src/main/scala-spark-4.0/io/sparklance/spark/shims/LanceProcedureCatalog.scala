package io.sparklance.spark.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.{Identifier, ProcedureCatalog}
import org.apache.spark.sql.connector.catalog.procedures.{
  BoundProcedure,
  ProcedureParameter,
  UnboundProcedure
}
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types._

import io.sparklance.spark.procedures.LanceProcedures

/**
 * Spark 4's procedure API for the Lance catalog: `CALL lance.system.<name>(table => ..., ...)`
 * runs one of [[LanceProcedures]] and returns its row of statistics.
 */
trait LanceProcedureCatalog extends ProcedureCatalog {

  /** The dataset path of a procedure's `table` argument (a path, or a table name). */
  protected def procedureTablePath(table: String): String

  override def loadProcedure(ident: Identifier): UnboundProcedure = {
    val spec = LanceProcedures.find(ident.namespace().toSeq, ident.name())
      .getOrElse(LanceProcedures.unknown(ident.toString))
    new UnboundProcedure {
      override def name(): String = spec.name
      override def description(): String = spec.description
      override def bind(input: StructType): BoundProcedure = new Bound(spec, input)
    }
  }

  /**
   * `spec` bound to the arguments given (`inputType`, named or positional): an interval
   * argument keeps the interval type it was given (`INTERVAL '7' DAY`, `INTERVAL '1' HOUR`, ...).
   */
  private final class Bound(spec: LanceProcedures.Spec, inputType: StructType)
      extends BoundProcedure {
    private val types: Seq[DataType] = spec.params.zipWithIndex.map { case (p, i) =>
      val named = inputType.fields.exists(f => spec.params.exists(_.name == f.name))
      val given =
        if (named) inputType.fields.find(_.name == p.name) else inputType.fields.lift(i)
      (p.dataType, given.map(_.dataType)) match {
        case (_: DayTimeIntervalType, Some(t: DayTimeIntervalType)) => t
        case (t, _) => t
      }
    }

    override def name(): String = spec.name
    override def description(): String = spec.description
    override def isDeterministic: Boolean = false

    override def parameters(): Array[ProcedureParameter] =
      spec.params.zip(types).map { case (p, t) =>
        val b = ProcedureParameter.in(p.name, t)
        (if (p.required) b else b.defaultValue("NULL")).build()
      }.toArray

    override def call(input: InternalRow): java.util.Iterator[Scan] = {
      val args = spec.params.zip(types).zipWithIndex.map { case ((p, t), i) =>
        p.name -> (if (input.isNullAt(i)) null
                   else t match {
                     case StringType => input.getUTF8String(i).toString
                     case LongType | _: DayTimeIntervalType => input.getLong(i)
                     case IntegerType => input.getInt(i)
                     case BooleanType => input.getBoolean(i)
                     case DoubleType => input.getDouble(i)
                     case other => throw new IllegalStateException(s"parameter type $other")
                   })
      }.toMap
      val table = Option(args("table")).map(_.toString).getOrElse(
        throw io.sparklance.LanceErrors.invalidOption(
          "table",
          "NULL",
          s"procedure ${spec.name} needs the table: a dataset path or a table name"
        )
      )
      val path = procedureTablePath(table)
      val values = spec.run(SparkSession.active, path, args - "table")
      val row = InternalRow.fromSeq(values)
      val scan: Scan = new LocalScan {
        override def rows(): Array[InternalRow] = Array(row)
        override def readSchema(): StructType = spec.output
        override def description(): String = s"Lance procedure ${spec.name} on $path"
      }
      java.util.Collections.singletonList(scan).iterator()
    }
  }
}
