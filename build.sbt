// spark-lance: a pure-JVM Spark DataSource V2 for the Lance table and file formats.
//
// Layout (see README "Building"):
//   connector/core   the Lance file and table formats and storage; no Spark on its classpath.
//                    Built once per Scala binary version (2.12, 2.13).
//   connector/spark  the DataSource V2 glue, built once per Spark line from one source tree;
//                    code that differs between lines lives only in src/main/scala-spark-<line>.
//
// Dependency policy: Spark and everything Spark already ships (Arrow, RoaringBitmap,
// zstd-jni, lz4-java, Hadoop, Jackson) are `provided`, at the versions of the oldest Spark
// line we support, so core links against every line. Anything else goes into the assembly
// jar relocated under io.sparklance.shaded, so it cannot clash with a user's classpath.

import scala.xml.{Elem, Node => XmlNode}
import scala.xml.transform.{RewriteRule, RuleTransformer}

// The one place the version is written: VERSION at the repository root (also read by the
// Makefile and the Python package's build).
val projectVersion = IO.read(file("VERSION")).trim

ThisBuild / organization := "io.sparklance"
ThisBuild / version := projectVersion

val scala212 = "2.12.18"
val scala213 = "2.13.16"
val protobufVersion = "4.29.3"

import SparkLine.binary

// One 4.x jar serves Spark 4.0 to 4.3 (make test-matrix checks each); 3.5 needs its own.
val sparkLines = Seq(
  SparkLine("3.5", "3.5.9", Seq(scala212, scala213), served = Seq("3.5")),
  SparkLine("4.0", "4.0.1", Seq(scala213), served = Seq("4.0", "4.1", "4.2", "4.3"))
)

// What the Spark 3.5 line ships; core compiles against these (the oldest line we support).
val coreProvided = Seq(
  "org.apache.hadoop" % "hadoop-client-api" % "3.3.4",
  "org.apache.arrow" % "arrow-vector" % "12.0.1",
  "org.apache.arrow" % "arrow-memory-netty" % "12.0.1",
  "org.roaringbitmap" % "RoaringBitmap" % "0.9.45",
  "com.github.luben" % "zstd-jni" % "1.5.5-4",
  "org.lz4" % "lz4-java" % "1.8.0",
  "com.fasterxml.jackson.core" % "jackson-databind" % "2.15.2"
).map(_ % Provided)

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

// How many test JVMs run at once: one per core, at most 4. Tests fork (each JVM gets the
// options below), and within a JVM suites run one after the other.
val Cores = java.lang.Runtime.getRuntime.availableProcessors
val TestForks = math.max(1, math.min(4, Cores))
// Suites are dealt round-robin into more groups than run at once, so that a JVM that drew
// the long suites does not leave the others idle at the end.
val TestGroups = 2 * TestForks
Global / concurrentRestrictions := Seq(
  Tags.limitAll(math.max(2, Cores)),
  Tags.limit(Tags.ForkedTestGroup, TestForks),
  Tags.exclusiveGroup(Tags.Clean)
)

val coreDir = file("connector/core")
val sparkDir = file("connector/spark")

/** Settings every module shares; each module instance gets its own target directory. */
def moduleSettings(id: String, srcDir: File, scala: String) = Seq(
  scalaVersion := scala,
  sourceDirectory := (ThisBuild / baseDirectory).value / srcDir.getPath / "src",
  target := (ThisBuild / baseDirectory).value / "connector" / "target" / id,
  javacOptions ++= Seq("--release", "17"),
  // A match in the transaction layer that misses a case is an error, not a warning: the
  // conflict table (table/txn/ConflictTable.scala) relies on it to refuse a new operation
  // whose row or column is not filled.
  scalacOptions ++= Seq(
    "-deprecation",
    "-feature",
    "-unchecked",
    "-Wconf:cat=other-match-analysis&src=.*/main/scala/io/sparklance/table/txn/.*:e"
  ) ++ (
    if (scala.startsWith("2.12"))
      Seq("-release", "17", "-Xlint:-unused,_", "-Ywarn-unused:-imports")
    else Seq("-release", "17", "-Xlint:-unused,_")
  ),
  // Per-Scala-version sources (src/main/scala-2.12, src/main/scala-2.13) for the few
  // collection differences.
  Compile / unmanagedSourceDirectories += sourceDirectory.value / "main" / s"scala-${binary(scala)}",
  // Benchmarks live under bench/jvm/<module>: compiled with the tests (so they keep
  // compiling), run only when their environment variable names a dataset.
  Test / unmanagedSourceDirectories +=
    (ThisBuild / baseDirectory).value / "bench" / "jvm" / srcDir.getName,
  Test / fork := true,
  Test / javaOptions ++= sparkJavaOpts ++ Seq(
    "-Xmx3g",
    s"-Dsparklance.repo.root=${(ThisBuild / baseDirectory).value}"
  ),
  // Suites run in TestGroups JVMs, TestForks at once (the machine's cores), each suite alone
  // in its JVM's turn; a suite that needs pylance starts its own co-process in its JVM.
  Test / testGrouping := {
    val opts = (Test / javaOptions).value.toVector
    (Test / definedTests).value.sortBy(_.name).zipWithIndex
      .groupBy { case (_, i) => i % TestGroups }.toSeq.sortBy(_._1).map { case (g, suites) =>
        Tests.Group(
          s"forked-$g",
          suites.map(_._1),
          Tests.SubProcess(ForkOptions().withRunJVMOptions(opts))
        )
      }
  },
  // Groups run at once (Tags.ForkedTestGroup limits how many); suites within one JVM do not.
  Test / parallelExecution := true,
  Test / testForkedParallel := false,
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
  libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
  publish / skip := true
)

def coreProject(scala: String): Project = {
  val id = s"core_${binary(scala).replace(".", "")}"
  Project(id, file(s"connector/target/.sbt/$id"))
    .settings(moduleSettings(id, coreDir, scala))
    .settings(
      name := s"spark-lance-core",
      libraryDependencies ++= coreProvided ++ Seq(
        "com.google.protobuf" % "protobuf-java" % protobufVersion,
        "com.google.protobuf" % "protobuf-java" % protobufVersion % "protobuf"
      ) ++ (if (scala.startsWith("2.12"))
              // Spark 3.5 ships it for Scala 2.12 (scala.jdk.CollectionConverters et al.).
              Seq("org.scala-lang.modules" %% "scala-collection-compat" % "2.7.0" % Provided)
            else Nil),
      // Java classes generated from ../protos at build time.
      Compile / PB.protoSources := Seq((ThisBuild / baseDirectory).value / "protos"),
      Compile / PB.targets := Seq(
        PB.gens.java(protobufVersion) -> (Compile / sourceManaged).value / "protobuf"
      ),
      PB.protocVersion := protobufVersion,
      Compile / resourceGenerators += Def.task {
        val f = (Compile / resourceManaged).value / "io" / "sparklance" / "version.properties"
        IO.write(f, s"version=${version.value}\n")
        Seq(f)
      }.taskValue,
      // Commits log through SLF4J, which every Spark line ships (3.5: 2.0.7).
      libraryDependencies += "org.slf4j" % "slf4j-api" % "2.0.7" % Provided,
      // Hadoop's client API needs its shaded runtime to run (core's tests use local files).
      libraryDependencies += "org.apache.hadoop" % "hadoop-client-runtime" % "3.3.4" % Test
    )
}

lazy val core212 = coreProject(scala212)
lazy val core213 = coreProject(scala213)

def sparkProject(l: SparkLine, scala: String): Project = {
  val id = l.id(scala)
  val core = if (scala.startsWith("2.12")) core212 else core213
  Project(id, file(s"connector/target/.sbt/$id"))
    .dependsOn(core % "compile->compile;test->test")
    .settings(moduleSettings(id, sparkDir, scala))
    .settings(
      name := s"spark-lance-${l.line}",
      moduleName := name.value, // keep the dot: artifact spark-lance-3.5_2.12
      Compile / unmanagedSourceDirectories +=
        sourceDirectory.value / "main" / s"scala-spark-${l.line}",
      libraryDependencies ++= Seq(
        "org.apache.spark" %% "spark-sql" % l.sparkVersion % Provided
      ) ++ (if (scala.startsWith("2.12"))
              Seq("org.scala-lang.modules" %% "scala-collection-compat" % "2.7.0" % Provided)
            else Nil),
      // What the jar was built for: read at run time to refuse a Spark of another line
      // with a message instead of a linkage error.
      Compile / resourceGenerators += Def.task {
        val f = (Compile / resourceManaged).value / "io" / "sparklance" / "build.properties"
        IO.write(
          f,
          s"""version=${version.value}
             |spark.line=${l.line}
             |spark.version=${l.sparkVersion}
             |spark.lines.served=${l.served.mkString(",")}
             |scala.binary=${binary(scala)}
             |artifact=${moduleName.value}_${binary(scala)}
             |""".stripMargin
        )
        Seq(f)
      }.taskValue,
      // `provided` dependencies are on the classpath of run/console too.
      Compile / run := Defaults.runTask(
        Compile / fullClasspath,
        Compile / run / mainClass,
        Compile / run / runner
      ).evaluated,
      assembly / assemblyJarName := s"${moduleName.value}_${binary(scala)}-${version.value}.jar",
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
      publish / skip := false,
      Compile / packageBin := assembly.value,
      pomPostProcess := { (node: XmlNode) => dropDependencies(node) },
      publishMavenStyle := true,
      // Scaladoc of the whole connector takes minutes and nobody reads it from ~/.m2.
      Compile / packageDoc / publishArtifact := false
    )
}

// sbt finds projects among the build's vals: one per (Spark line, Scala version) above.
lazy val spark35_212 = sparkProject(sparkLines(0), scala212)
lazy val spark35_213 = sparkProject(sparkLines(0), scala213)
lazy val spark40_213 = sparkProject(sparkLines(1), scala213)

lazy val root = (project in file("."))
  .aggregate(core213, spark40_213)
  .settings(
    name := "spark-lance-root",
    publish / skip := true,
    publishLocal / skip := true,
    publishM2 / skip := true
  )
