package io.sparklance.table

/**
 * How manifest files under `_versions/` are named. Lance has two schemes and a dataset
 * uses exactly one:
 *  - V1: `{version}.manifest`;
 *  - V2: `{u64::MAX - version}.manifest`, zero-padded to 20 digits, so a lexicographic
 *    listing returns the newest version first.
 * The scheme is recognised from the name alone: V2 names are exactly 29 characters.
 */
sealed abstract class ManifestNaming(val name: String) extends Serializable {
  def fileName(version: Long): String
}

object ManifestNaming {
  private val Suffix = ".manifest"
  private val V2Length = 20 + Suffix.length

  case object V1 extends ManifestNaming("v1") {
    override def fileName(version: Long): String = s"$version$Suffix"
  }

  case object V2 extends ManifestNaming("v2") {
    // u64::MAX - v, printed unsigned: the value does not fit a signed Long.
    override def fileName(version: Long): String = {
      val inverted = java.lang.Long.toUnsignedString(-1L - version)
      ("0" * (20 - inverted.length)) + inverted + Suffix
    }
  }

  /**
   * Parses a file name of `_versions/` into (version, scheme). Staging files (`.tmp*`),
   * detached versions (`d{v}.manifest`) and anything else yield None.
   */
  def parse(fileName: String): Option[(Long, ManifestNaming)] = {
    if (!fileName.endsWith(Suffix) || fileName.startsWith(".")) return None
    val stem = fileName.substring(0, fileName.length - Suffix.length)
    if (stem.isEmpty || !stem.forall(c => c >= '0' && c <= '9')) return None
    if (fileName.length == V2Length) {
      val inverted =
        try java.lang.Long.parseUnsignedLong(stem)
        catch { case _: NumberFormatException => return None }
      Some((-1L - inverted, V2))
    } else {
      try Some((stem.toLong, V1))
      catch { case _: NumberFormatException => None }
    }
  }
}
