package io.sparklance.format.writer

import io.sparklance.LanceErrors

/**
 * A Lance data storage version this connector writes. Recorded in three places that must
 * agree: the manifest's `data_format.version`, each `DataFile`'s major/minor, and the file
 * footer (2.0 files carry footer 0.3, as the standard Lance writer does).
 */
sealed abstract class FileVersion(
    val name: String,
    val major: Int,
    val minor: Int,
    val footerMajor: Int,
    val footerMinor: Int
) extends Serializable {
  def structural: Boolean = minor >= 1
  override def toString: String = name
}

object FileVersion {
  case object V2_0 extends FileVersion("2.0", 2, 0, 0, 3)
  case object V2_1 extends FileVersion("2.1", 2, 1, 2, 1)
  case object V2_2 extends FileVersion("2.2", 2, 2, 2, 2)

  val all: Seq[FileVersion] = Seq(V2_0, V2_1, V2_2)

  /** What pylance 14 writes for a new dataset ("stable"). */
  val Default: FileVersion = V2_2

  /** Parses the names pylance accepts for `data_storage_version`. */
  def parse(s: String): Option[FileVersion] = s.trim.toLowerCase match {
    case "2.0" | "0.3" => Some(V2_0)
    case "2.1" => Some(V2_1)
    case "2.2" | "stable" => Some(V2_2)
    case _ => None
  }

  /** The version a dataset records in its manifest; fails for versions we cannot write. */
  def ofDataset(recorded: String, path: String): FileVersion = parse(recorded).getOrElse(
    throw LanceErrors.unsupported(
      s"Lance dataset $path stores data as version '$recorded', which this connector cannot write " +
        "(it writes 2.0, 2.1 and 2.2); rewrite the dataset with a supported data_storage_version"
    )
  )
}
