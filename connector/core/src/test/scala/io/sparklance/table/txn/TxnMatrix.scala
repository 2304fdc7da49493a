package io.sparklance.table.txn

import java.nio.file.Path

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.Assertions._

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, Snapshot, VersionSpec}
import io.sparklance.testutil.Pylance

/**
 * What the suites on `txn_matrix.py` datasets share: pylance's description of a dataset
 * (rows with row ids and version columns, fragments, config, indices, the last operation,
 * `validate()`), the latest snapshot, and the comparison of our table with pylance's own.
 */
object TxnMatrix {
  val fileIO: HadoopFileIO = HadoopFileIO.local()

  def describe(p: Path): JsonNode = Pylance.call("txn_matrix", "describe", p.toString)

  def latest(p: Path): Snapshot =
    LanceDataset.open(fileIO, p.toString).open(VersionSpec.Latest)

  /** Every key of pylance's description of its own table equal in ours; its own is valid. */
  def assertSame(what: String, ours: JsonNode, theirs: JsonNode): Unit = {
    assert(theirs.get("valid").asBoolean(), s"$what: pylance's own table: ${theirs.get("valid")}")
    val it = theirs.fieldNames()
    while (it.hasNext) {
      val k = it.next()
      assert(ours.get(k) == theirs.get(k), s"$what: $k differs")
    }
  }
}
