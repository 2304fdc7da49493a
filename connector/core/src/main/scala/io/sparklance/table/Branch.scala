package io.sparklance.table

/**
 * A branch as pylance 14 records it in `_refs/branches/{name}.json`: made from version
 * `parentVersion` of `parentBranch` (None: main); `versionMapping` pairs versions with ids.
 */
final case class Branch(
    name: String,
    parentBranch: Option[String],
    parentVersion: Long,
    versionMapping: Seq[(Long, String)],
    createAt: Long,
    manifestSize: Long
)
