package io.sparklance.storage

object Paths {

  /** Joins a dataset root and a relative child without doubling slashes. */
  def join(parent: String, child: String): String =
    if (parent.endsWith("/")) parent + child else parent + "/" + child

  def stripTrailingSlash(p: String): String =
    if (p.length > 1 && p.endsWith("/")) stripTrailingSlash(p.dropRight(1)) else p
}
