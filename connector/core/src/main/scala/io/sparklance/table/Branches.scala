package io.sparklance.table

import java.util.UUID

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.storage.{FileIO, FileTrees, Paths}
import io.sparklance.table.txn.{ManifestBuilder, TransactionLog}

/**
 * Branches as pylance 14 makes them (`create_branch`): a dataset of its own under
 * `tree/{name}/` whose first version is a shallow clone of the parent's version — the same
 * version number, every data, deletion and index file still the parent's (reached through
 * `base_paths` entry pointing at the parent's root and each file's `base_id`), the manifest
 * naming the branch — and a ref file. Versions written on the branch continue from there.
 * Cleanup of the parent keeps the versions branches were made from.
 */
object Branches {
  private val log = LoggerFactory.getLogger(getClass)
  private val mapper = new ObjectMapper()

  def dir(root: String): String = DatasetLayout.branchesDir(root)

  /** The branch's own dataset directory. */
  def path(root: String, name: String): String = DatasetLayout.branchRoot(root, name)

  def list(io: FileIO, root: String): Seq[Branch] =
    if (!io.exists(dir(root))) Nil
    else io.list(dir(root)).filter(e => !e.isDirectory && e.name.endsWith(".json")).map { e =>
      parse(e.name.stripSuffix(".json"), io.readFully(e.path), e.path)
    }.sortBy(_.name)

  def get(io: FileIO, root: String, name: String): Branch = {
    val file = Paths.join(dir(root), s"$name.json")
    if (!io.exists(file))
      throw LanceErrors.pathNotFound(s"${path(root, name)} (Lance dataset $root has no branch " +
        s"'$name'; branches: ${list(io, root).map(_.name).mkString(", ")})")
    parse(name, io.readFully(file), file)
  }

  /** Versions of the main branch that branches were made from (cleanup keeps them). */
  def referencedVersions(io: FileIO, root: String): Set[Long] =
    list(io, root).filter(_.parentBranch.isEmpty)
      .flatMap(b => b.parentVersion +: b.versionMapping.map(_._1)).toSet

  private def parse(name: String, bytes: Array[Byte], file: String): Branch = {
    val n =
      try mapper.readTree(bytes)
      catch {
        case e: Exception =>
          throw LanceErrors.corruptFile(file, s"branch file is not JSON: ${e.getMessage}", e)
      }
    val v = n.get("parentVersion")
    if (v == null || !v.canConvertToLong)
      throw LanceErrors.corruptFile(file, "branch file has no integer 'parentVersion'")
    val mapping = Option(n.get("identifier")).flatMap(i => Option(i.get("version_mapping")))
      .map(_.elements().asScala.toSeq.map(p => p.get(0).asLong -> p.get(1).asText))
      .getOrElse(Nil)
    Branch(
      name,
      Option(n.get("parentBranch")).filterNot(_.isNull).map(_.asText),
      v.asLong,
      mapping,
      Option(n.get("createAt")).map(_.asLong).getOrElse(0L),
      Option(n.get("manifestSize")).map(_.asLong).getOrElse(0L)
    )
  }

  /**
   * Creates branch `name` from version `version` of the main branch of `root` — or of branch
   * `parent` — as pylance's `create_branch(name, version)` (`(parent, version)`): the branch's
   * manifest, its Clone transaction, version hint and ref file. A branch of a branch lives
   * beside it under `tree/`; the files its parent wrote are reached through a base path named
   * for the parent, and its ref extends the parent's version mapping. Fails if the branch
   * exists.
   */
  def create(
      io: FileIO,
      root0: String,
      name: String,
      version: Long,
      parent: Option[String] = None
  ): Branch = {
    val root = Paths.stripTrailingSlash(root0)
    Tags.invalidName(name).foreach { why =>
      throw LanceErrors.invalidOption("branch", name, s"not a valid branch name for $root: $why")
    }
    val ref = Paths.join(dir(root), s"$name.json")
    val home = path(root, name)
    if (io.exists(ref) || io.exists(DatasetLayout.versionsDir(home)))
      throw LanceErrors.invalidOption("branch", name, s"branch $name already exists in $root")
    val parentRef = parent.map(get(io, root, _))
    val sourceRoot = parent.map(path(root, _)).getOrElse(root)
    val source = LanceDataset.open(io, sourceRoot).open(VersionSpec.Number(version))
    val sourceBranch = if (source.manifest.hasBranch) source.manifest.getBranch else ""
    if (sourceBranch != parent.getOrElse(""))
      throw LanceErrors.corruptFile(
        source.manifestPath,
        s"version $version of $sourceRoot " +
          s"records branch '$sourceBranch', not '${parent.getOrElse("")}'"
      )

    val m = ManifestBuilder.nextOf(source.manifest)
    val baseId = (m.getBasePathsList.asScala.map(_.getId) :+ -1).max + 1
    val base = TableProtos.BasePath.newBuilder().setId(baseId).setIsDatasetRoot(true)
      .setPath(sourceRoot)
    parent.foreach(base.setName)
    m.addBasePaths(base)
    m.getFragmentsBuilderList.asScala.foreach { f =>
      f.getFilesBuilderList.asScala.filterNot(_.hasBaseId).foreach(_.setBaseId(baseId))
      if (f.hasDeletionFile && !f.getDeletionFile.hasBaseId)
        f.getDeletionFileBuilder.setBaseId(baseId)
    }
    val indices = ManifestFile.indices(io, source).map { i =>
      if (i.hasBaseId) i else i.toBuilder.setBaseId(baseId).build()
    }
    val indexSection = if (!source.manifest.hasIndexSection) None
    else Some(TableProtos.IndexSection.newBuilder().addAllIndices(indices.asJava).build()
      .toByteArray)
    val flags = FeatureFlags.BasePaths
    m.setBranch(name).setReaderFeatureFlags(m.getReaderFeatureFlags | flags)
      .setWriterFeatureFlags(m.getWriterFeatureFlags | flags)
    val uuid = UUID.randomUUID().toString
    val txnName = TransactionLog.fileName(version, uuid)
    val txn = Transaction.newBuilder().setReadVersion(version).setUuid(uuid)
      .setClone({
        val c = Transaction.Clone.newBuilder().setIsShallow(true).setRefVersion(version)
          .setRefPath(sourceRoot).setBranchName(name)
        parent.foreach(c.setRefName)
        c
      }).build().toByteArray
    val now = java.time.Instant.now()
    m.setTransactionFile(txnName).setTimestamp(com.google.protobuf.Timestamp.newBuilder()
      .setSeconds(now.getEpochSecond).setNanos(now.getNano))
    val bytes = ManifestFile.encode(m, indexSection, Some(txn))

    io.createIfAbsent(Paths.join(DatasetLayout.transactionsDir(home), txnName), txn)
    val versions = new VersionLog(io, home)
    val manifestPath = versions.manifestPath(version, source.naming)
    if (!io.createIfAbsent(manifestPath, bytes))
      throw LanceErrors.invalidOption("branch", name, s"branch $name already exists in $root")
    versions.writeHint(version)
    val id = UUID.randomUUID().toString.replace("-", "")
    val created = now.getEpochSecond
    val mapping = parentRef.map(_.versionMapping).getOrElse(Nil) :+ (version -> id)
    val pairs = mapping.map { case (v, i) =>
      s"""      [
         |        $v,
         |        "$i"
         |      ]""".stripMargin
    }.mkString(",\n")
    val parentJson = parent.map(p => mapper.writeValueAsString(p)).getOrElse("null")
    val json =
      s"""{
         |  "parentBranch": $parentJson,
         |  "identifier": {
         |    "version_mapping": [
         |$pairs
         |    ]
         |  },
         |  "parentVersion": $version,
         |  "createAt": $created,
         |  "manifestSize": ${bytes.length},
         |  "metadata": {}
         |}""".stripMargin.getBytes("UTF-8")
    if (!io.createIfAbsent(ref, json))
      throw LanceErrors.invalidOption("branch", name, s"branch $name already exists in $root")
    log.info(s"Created branch $name of $root from version $version" +
      parent.map(p => s" of branch $p").getOrElse(""))
    Branch(name, parent, version, mapping, created, bytes.length)
  }

  /**
   * Deletes branch `name`: its ref file and its directory (its own files); refused, as by
   * pylance, while tags name versions of it or branches were made from it.
   */
  def delete(io: FileIO, root0: String, name: String): Unit = {
    val root = Paths.stripTrailingSlash(root0)
    get(io, root, name)
    val tags = Tags.list(io, root).filter(_.branch.contains(name))
    if (tags.nonEmpty)
      throw LanceErrors.unsupported(s"Branch $name of $root is referenced by tags " +
        s"${tags.map(t => s"${t.name} (version ${t.version})").mkString(", ")}: delete them first")
    val children = list(io, root).filter(_.parentBranch.contains(name))
    if (children.nonEmpty)
      throw LanceErrors.unsupported(s"Branch $name of $root is the parent of branch(es) " +
        s"${children.map(c => s"${c.name} (from version ${c.parentVersion})").mkString(", ")}, " +
        "which read its files: delete them first")
    io.delete(Paths.join(dir(root), s"$name.json"))
    FileTrees.deleteQuietly(io, path(root, name), log)
    log.info(s"Deleted branch $name of $root")
  }
}
