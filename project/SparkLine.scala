/** A Spark line the connector is built for: its shim folder, the Spark it compiles against,
 *  its Scala versions and the Spark lines (major.minor) its jar serves. One project per (line, Scala version) is defined in build.sbt. */
case class SparkLine(
    line: String,
    sparkVersion: String,
    scalaVersions: Seq[String],
    served: Seq[String]
) {
  def id(scala: String): String =
    s"spark${line.replace(".", "")}_${SparkLine.binary(scala).replace(".", "")}"
}

object SparkLine {
  def binary(scala: String): String = scala.split('.').take(2).mkString(".")
}
