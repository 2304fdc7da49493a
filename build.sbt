// spark-lance: a pure-JVM Spark DataSource V2 for the Lance table and file formats.
//
// Dependency policy: Spark and everything Spark already ships (Arrow, RoaringBitmap,
// zstd-jni, lz4-java, Hadoop) are `provided` and used at Spark's own versions. Anything
// else goes into the assembly jar relocated under io.sparklance.shaded, so it cannot
// clash with whatever a user's Spark classpath carries.

import scala.xml.{Elem, Node => XmlNode}
import scala.xml.transform.{RewriteRule, RuleTransformer}

ThisBuild / organization := "io.sparklance"
ThisBuild / version := "0.1.0"
ThisBuild / scalaVersion := "2.13.16"

val sparkVersion = "4.0.1"
val protobufVersion = "4.29.3"

// Spark on Java 17 needs these opens; the same list Spark's own launcher adds.
val sparkJavaOpts = Seq(
  "-XX:+IgnoreUnrecognizedVMOptions",
  "--add-opens=java.base/java.lang=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
  "--add-opens=java.base/java.io=ALL-UNNAMED",
  "--add-opens=java.base/java.net=ALL-UNNAMED",
  "--add-opens=java.base/java.nio=ALL-UNNAMED",
  "--add-opens=java.base/java.util=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
  "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
  "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
  "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
  "-Djdk.reflect.useDirectMethodHandle=false",
  "-Dio.netty.tryReflectionSetAccessible=true"
)

// The published artifact is the self-contained assembly, so its pom lists no
// dependencies: Spark provides the rest, and protobuf is inside, relocated.
val dropDependencies = new RuleTransformer(new RewriteRule {
  override def transform(n: XmlNode): Seq[XmlNode] = n match {
    case e: Elem if e.label == "dependencies" => Seq.empty
    case other => Seq(other)
  }
})

lazy val connector = (project in file("connector"))
  .settings(
    name := "spark-lance",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_"),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      "com.google.protobuf" % "protobuf-java" % protobufVersion,
      "com.google.protobuf" % "protobuf-java" % protobufVersion % "protobuf",
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ),
    // Java classes generated from ../protos at build time.
    Compile / PB.protoSources := Seq((ThisBuild / baseDirectory).value / "protos"),
    Compile / PB.targets := Seq(PB.gens.java(protobufVersion) -> (Compile / sourceManaged).value / "protobuf"),
    PB.protocVersion := protobufVersion,

    Test / fork := true,
    Test / javaOptions ++= sparkJavaOpts ++ Seq("-Xmx3g", s"-Dsparklance.repo.root=${(ThisBuild / baseDirectory).value}"),
    Test / parallelExecution := false,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // `provided` dependencies are on the classpath of run/console too.
    Compile / run := Defaults.runTask(Compile / fullClasspath, Compile / run / mainClass, Compile / run / runner).evaluated,

    assembly / assemblyJarName := s"spark-lance_${scalaBinaryVersion.value}-${version.value}.jar",
    assemblyPackageScala / assembleArtifact := false,
    assembly / assemblyShadeRules := Seq(
      ShadeRule.rename("com.google.protobuf.**" -> "io.sparklance.shaded.protobuf.@1").inAll
    ),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", "versions", _*) => MergeStrategy.first
      case PathList("META-INF", _*) => MergeStrategy.discard
      case PathList("google", "protobuf", _*) => MergeStrategy.discard
      case x if x.endsWith("module-info.class") => MergeStrategy.discard
      case x => MergeStrategy.defaultMergeStrategy(x)
    },
    // Publish the assembly as the main jar so `--packages` gets one self-contained jar.
    Compile / packageBin := assembly.value,
    pomPostProcess := { (node: XmlNode) => dropDependencies(node) },
    publishMavenStyle := true,
    // Scaladoc of the whole connector takes minutes and nobody reads it from ~/.m2.
    Compile / packageDoc / publishArtifact := false
  )

lazy val root = (project in file("."))
  .aggregate(connector)
  .settings(
    name := "spark-lance-root",
    publish / skip := true,
    publishLocal / skip := true,
    publishM2 / skip := true
  )
