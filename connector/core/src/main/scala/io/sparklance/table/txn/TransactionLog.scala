package io.sparklance.table.txn

import io.sparklance.LanceException
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.{DatasetLayout, LanceDataset, ManifestFile, Snapshot, VersionSpec}

/**
 * The transactions that made a dataset's versions: for conflict checks, and later for
 * streaming and change feeds. A version's transaction is read from its `.txn` file (named by
 * the manifest's `transaction_file`) or, failing that, from the copy pylance 14 embeds in the
 * manifest (`transaction_section`).
 */
final class TransactionLog(fileIO: FileIO, root0: String) {
  private val root = Paths.stripTrailingSlash(root0)

  /** The operations committed after version `after` up to and including `upTo`, in order. */
  def between(after: Long, upTo: Long): Seq[CommittedTransaction] =
    if (upTo <= after) Nil
    else {
      val ds = LanceDataset.open(fileIO, root)
      (after + 1 to upTo).map(v => of(ds.open(VersionSpec.Number(v))))
    }

  /** The operations committed after version `after`, up to the latest version. */
  def since(after: Long): Seq[CommittedTransaction] =
    between(after, LanceDataset.open(fileIO, root).latestVersion())

  /** The transaction that produced `s` (None inside when it cannot be found or decoded). */
  def of(s: Snapshot): CommittedTransaction = {
    val m = s.manifest
    def parse(bytes: Array[Byte]) =
      try Some(Transaction.parseFrom(bytes))
      catch { case _: com.google.protobuf.InvalidProtocolBufferException => None }
    val fromFile =
      if (m.getTransactionFile.isEmpty) None
      else {
        val p = Paths.join(DatasetLayout.transactionsDir(root), m.getTransactionFile)
        try parse(fileIO.readFully(p))
        catch { case _: java.io.IOException => None }
      }
    val txn = fromFile.orElse {
      val pos =
        if (m.hasTransactionSection) Some(m.getTransactionSection)
        else if (m.hasTransactionSectionDeprecated) Some(m.getTransactionSectionDeprecated)
        else None
      pos.flatMap { p =>
        try parse(ManifestFile.readSection(fileIO, s.manifestPath, p))
        catch { case _: LanceException | _: java.io.IOException => None }
      }
    }
    CommittedTransaction(s.version, txn)
  }
}

object TransactionLog {

  /** `{read_version}-{uuid}.txn`: pylance names the file by the version the writer read. */
  def fileName(readVersion: Long, uuid: String): String = s"$readVersion-$uuid.txn"
}
