package io.sparklance.table.commit

object DataFileNames {
  private val rnd = new java.security.SecureRandom()

  /**
   * A fresh data file name as Lance makes them: 24 binary digits then 26 hex digits, from
   * random bits, plus `.lance`. Unique per file, so concurrent writers never collide.
   */
  def next(): String = next(newToken())

  /**
   * A name whose hex part starts with `token` (8 hex digits): every file of one write job
   * carries its job's token, so the job can find and delete all of its files when it fails,
   * including files of tasks that were killed before they could report them.
   */
  def next(token: String): String = {
    require(
      token.length == 8 && token.forall(c => Character.digit(c, 16) >= 0),
      s"bad token $token"
    )
    val bin = new StringBuilder
    val a = rnd.nextInt(1 << 24)
    (23 to 0 by -1).foreach(i => bin.append(if (((a >>> i) & 1) == 1) '1' else '0'))
    val hex = new StringBuilder(token.toLowerCase)
    while (hex.length < 26) hex.append(java.lang.Long.toHexString(rnd.nextLong() & 0xfL))
    s"$bin$hex.lance"
  }

  def newToken(): String = f"${rnd.nextInt()}%08x"

  /** Whether `name` is a data file written by the job with `token`. */
  def ofJob(name: String, token: String): Boolean =
    name.length == 50 + ".lance".length && name.endsWith(".lance") && name.substring(
      24,
      32
    ) == token.toLowerCase
}
