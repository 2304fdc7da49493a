package io.sparklance.spark;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * Refuses to run this jar in a Spark of another line or Scala version, with a message naming
 * both, instead of the linkage error ({@code NoSuchMethodError}, {@code AbstractMethodError})
 * the JVM would raise somewhere later. Plain Java with reflection only, so that it runs the same
 * whatever Scala and Spark are on the classpath.
 *
 * <p>The jar's line comes from {@code io/sparklance/build.properties}, written by the build.
 */
public final class SparkLineCheck {
  private SparkLineCheck() {}

  private static volatile String verdict; // null: not checked yet; "": fine; else the error

  /** Throws {@link UnsupportedOperationException} if the running Spark cannot use this jar. */
  public static void require() {
    String v = verdict();
    if (!v.isEmpty()) throw new UnsupportedOperationException(v);
  }

  /**
   * Whether the running Spark can use this jar: the session extension adds nothing when it
   * cannot, so that a jar of another line never breaks a session (only format("lance") fails,
   * with {@link #require}'s explanation).
   */
  public static boolean fits() {
    return verdict().isEmpty();
  }

  private static String verdict() {
    String v = verdict;
    if (v == null) {
      v = check(runningSparkVersion(), runningScalaVersion());
      verdict = v;
    }
    return v;
  }

  /**
   * The error for a Spark {@code sparkVersion} on Scala {@code scalaVersion}, or "" if this
   * jar serves it. Package-private for tests.
   */
  static String check(String sparkVersion, String scalaVersion) {
    Properties build = buildProperties();
    String line = build.getProperty("spark.line", "?");
    String scala = build.getProperty("scala.binary", "?");
    String version = build.getProperty("version", "?");
    List<String> lines = Arrays.asList(build.getProperty("spark.lines.served", line).split(","));
    String runningLine = majorMinor(sparkVersion);
    String runningScala = majorMinor(scalaVersion);
    if (lines.contains(runningLine) && scala.equals(runningScala)) return "";
    String jar = "spark-lance-" + line + "_" + scala + "-" + version + ".jar";
    String wanted = "spark-lance-" + artifactLine(runningLine) + "_" + runningScala;
    return "This spark-lance jar (" + jar + ") is built for Spark " + String.join("/", lines)
        + " with Scala " + scala + ", but this is Spark " + sparkVersion + " with Scala "
        + scalaVersion + ". Use the jar built for it (io.sparklance:" + wanted + ":" + version
        + "); the spark_lance wheel (make wheel) carries every line's jar and"
        + " spark_lance.configure() picks the one the installed pyspark needs.";
  }

  /** The artifact line that serves a running line: 4.x is served by the 4.0 build. */
  private static String artifactLine(String runningLine) {
    return runningLine.startsWith("4.") ? "4.0" : runningLine;
  }

  private static String majorMinor(String version) {
    String[] parts = version.split("\\.");
    return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
  }

  private static Properties buildProperties() {
    Properties p = new Properties();
    try (InputStream in = SparkLineCheck.class.getResourceAsStream("/io/sparklance/build.properties")) {
      if (in != null) p.load(in);
    } catch (IOException e) {
      // an unreadable resource reads as "?" below, which no running line matches
    }
    return p;
  }

  private static String runningSparkVersion() {
    try {
      Class<?> pkg = Class.forName("org.apache.spark.package$");
      Object module = pkg.getField("MODULE$").get(null);
      return String.valueOf(pkg.getMethod("SPARK_VERSION").invoke(module));
    } catch (ReflectiveOperationException | LinkageError e) {
      return "unknown";
    }
  }

  private static String runningScalaVersion() {
    try {
      Class<?> props = Class.forName("scala.util.Properties");
      return String.valueOf(props.getMethod("versionNumberString").invoke(null));
    } catch (ReflectiveOperationException | LinkageError e) {
      return "unknown";
    }
  }
}
