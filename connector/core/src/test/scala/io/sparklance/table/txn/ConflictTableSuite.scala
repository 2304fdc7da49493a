package io.sparklance.table.txn

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.proto.TransactionProtos.Transaction.OperationCase

/**
 * The conflict table is total and stated once: every kind of operation a transaction can
 * record has its column, every row's operation has a rule for each cell that depends on what
 * was touched, and TRANSACTIONS.md shows the table as the code has it. (That a row or column
 * left out does not compile is the build's `-Wconf`; the outcomes themselves are checked
 * against pylance in TransactionMatrixSuite and ConflictResolverSuite.)
 */
class ConflictTableSuite extends AnyFunSuite {
  private def bits(ids: Int*) = RoaringBitmap.bitmapOf(ids: _*)
  private val file = TableProtos.DataFile.newBuilder().setPath("f.lance").addFields(1).build()

  /** One operation for every row. */
  private val samples: Map[ConflictRow, Operation] = Seq[Operation](
    Append(Nil),
    Overwrite(Nil, Nil, Map.empty, None, mustCreate = true),
    Overwrite(Nil, Nil, Map.empty, None, mustCreate = false, config = Map("k" -> "v")),
    Delete(Map(0L -> bits(1))),
    Update(Map(0L -> bits(1)), Nil, Seq(1)),
    ColumnUpdate(Map(0L -> file), Map(0L -> bits(1)), Seq(1)),
    Restore(1),
    UpdateConfig(),
    Project(Nil),
    Merge(Nil, Nil),
    ReserveFragments(1),
    CreateIndex(Nil, Nil),
    Rewrite(Nil),
    DataReplacement(Seq(0L -> file))
  ).map(op => op.conflictRow -> op).toMap

  /** A committed transaction of `kind` recording nothing in particular. */
  private def committed(kind: OperationKind): CommittedTransaction = {
    val b = Transaction.newBuilder().setReadVersion(1).setUuid("u")
    val field = Transaction.getDescriptor.getFields.stream()
      .filter(f =>
        f.getContainingOneof != null &&
          OperationKind.of(OperationCase.forNumber(f.getNumber)).contains(kind)
      )
      .findFirst().get()
    b.setField(field, b.newBuilderForField(field).buildPartial())
    CommittedTransaction(2, Some(b.buildPartial()))
  }

  test("every operation a transaction can record is a column") {
    val cases = OperationCase.values.filter(_ != OperationCase.OPERATION_NOT_SET)
    for (c <- cases) assert(OperationKind.of(c).isDefined, s"$c has no OperationKind")
    assert(cases.flatMap(OperationKind.of).toSet == OperationKind.all.toSet)
    assert(OperationKind.of(OperationCase.OPERATION_NOT_SET).isEmpty)
  }

  test("every row has an operation, and each cell that depends has its rule") {
    assert(samples.keySet == ConflictRow.all.toSet)
    for (row <- ConflictRow.all; kind <- OperationKind.all) {
      val c = committed(kind)
      assert(c.operationName == kind.name)
      ConflictTable.cell(row, kind) match {
        case ConflictCell.Depends(_) =>
          // Throws IllegalStateException (ConflictTable.noRule) when the operation has none.
          ConflictTable.resolve(samples(row), kind, c)
        case _ =>
      }
    }
  }

  // SPARKLANCE_UPDATE_DOCS=1 writes the table into TRANSACTIONS.md instead of failing.
  test("TRANSACTIONS.md shows the conflict table as the code states it") {
    val root = sys.props.getOrElse("sparklance.repo.root", ".")
    val path = Paths.get(root, "connector", "core", "TRANSACTIONS.md")
    val doc = new String(Files.readAllBytes(path), UTF_8)
    val (begin, end) = ("<!-- conflict-table: begin -->\n", "<!-- conflict-table: end -->")
    val (from, to) = (doc.indexOf(begin), doc.indexOf(end))
    assert(from >= 0 && to > from, s"TRANSACTIONS.md has no $begin")
    val table = ConflictTable.markdown
    if (doc.substring(from + begin.length, to) != table) {
      if (sys.env.get("SPARKLANCE_UPDATE_DOCS").contains("1"))
        Files.write(
          path,
          (doc.substring(0, from + begin.length) + table + doc.substring(to))
            .getBytes(UTF_8)
        )
      else fail(s"TRANSACTIONS.md's conflict table is stale (SPARKLANCE_UPDATE_DOCS=1 " +
        s"rewrites it); it should read:\n$table")
    }
  }
}
