package io.sparklance

import java.util.Properties

/**
 * The connector's version, from `io/sparklance/version.properties`, which the build writes from
 * the repository's VERSION file (the one place the version is written). It goes into every
 * manifest we commit as the writer version.
 */
object ConnectorVersion {
  val value: String = {
    val p = new Properties()
    val in = getClass.getResourceAsStream("/io/sparklance/version.properties")
    if (in != null)
      try p.load(in)
      finally in.close()
    Option(p.getProperty("version")).filter(_.nonEmpty).getOrElse("unknown")
  }
}
