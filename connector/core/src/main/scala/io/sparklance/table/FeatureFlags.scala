package io.sparklance.table

import io.sparklance.LanceErrors

/**
 * The reader/writer feature flags of a manifest. A Lance writer sets a bit for every
 * feature a reader must understand; a reader that meets a bit it does not know must refuse
 * the version rather than return wrong rows.
 */
object FeatureFlags {
  val DeletionFiles = 1L
  val StableRowIds = 2L
  val UseV2Format = 4L // deprecated; says nothing a reader needs
  val TableConfig = 8L
  val BasePaths = 16L
  val TransactionInManifestOnly = 32L
  val DataOverlays = 64L // unstable in Lance
  val CoveredIndexMetadata = 128L
  val MixedDataFileVersions = 256L
  val FragmentReuseIndexWithStableRowIds = 512L
  val FragmentReuseIndexTransitions = 1024L
  // Bits 11 and up as lance-table 14.0.2 (feature_flags.rs) assigns them.
  val SpilledRowLineage = 2048L
  val FragmentTree = 4096L // reserved; Lance itself refuses it
  val IndependentCoveringFields = 8192L

  /** Blob v2 descriptors of kind Managed / ManagedWithBase (objects under `_blobs/` of a base). */
  val ManagedBlobs = 16384L

  private val names: Seq[(Long, String)] = Seq(
    DeletionFiles -> "deletion files",
    StableRowIds -> "stable row ids",
    UseV2Format -> "v2 format",
    TableConfig -> "table config",
    BasePaths -> "base paths",
    TransactionInManifestOnly -> "transaction in manifest only",
    DataOverlays -> "data overlays",
    CoveredIndexMetadata -> "covered index metadata",
    MixedDataFileVersions -> "mixed data file versions",
    FragmentReuseIndexWithStableRowIds -> "fragment reuse index with stable row ids",
    FragmentReuseIndexTransitions -> "fragment reuse index transitions",
    SpilledRowLineage -> "spilled row lineage",
    FragmentTree -> "fragment tree",
    IndependentCoveringFields -> "independent covering fields",
    ManagedBlobs -> "managed blobs"
  )

  /**
   * Flags this reader handles. Index-only features (covered index metadata, fragment reuse
   * transitions) do not change what a scan returns, since a scan ignores indices. Managed
   * blobs are resolved by the blob reader (table.BlobBytes).
   */
  val ReaderSupported: Long = DeletionFiles | StableRowIds | UseV2Format | TableConfig | BasePaths |
    TransactionInManifestOnly | CoveredIndexMetadata | MixedDataFileVersions | FragmentReuseIndexTransitions |
    ManagedBlobs

  def describe(bit: Long): String =
    names.find(_._1 == bit).map { case (b, n) => s"$n (flag $b)" }.getOrElse(
      s"unknown feature (flag $bit)"
    )

  /** The single bits of `flags` outside `supported`, described. */
  def unsupported(flags: Long, supported: Long): Seq[String] = {
    val extra = flags & ~supported
    (0 until 64).map(1L << _).filter(b => (extra & b) != 0).map(describe)
  }

  def checkReadable(flags: Long, datasetPath: String, version: Long): Unit = {
    val bad = unsupported(flags, ReaderSupported)
    if (bad.nonEmpty) throw LanceErrors.unsupportedFeatureFlags(datasetPath, version, "reader", bad)
  }
}
