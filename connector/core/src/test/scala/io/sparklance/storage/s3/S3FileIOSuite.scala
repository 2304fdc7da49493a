package io.sparklance.storage.s3

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{Callable, Executors}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.apache.hadoop.conf.Configuration
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.{LanceCorruptFileException, LanceUnsupportedException}
import io.sparklance.storage.RoutingFileIO
import io.sparklance.testutil.{DefaultLineOnly, Pylance}

/**
 * S3FileIO against a real S3 server (moto, behind the test proxy of tests/s3server.py that
 * counts requests and injects faults): the FileIO contract, exactly-once conditional
 * commits, multipart uploads, retries.
 */
@DefaultLineOnly
class S3FileIOSuite extends AnyFunSuite with BeforeAndAfterEach {
  private lazy val server: JsonNode = Pylance.call("s3_ops", "start")
  private lazy val bucket = server.get("bucket").asText()
  private var n = 0

  private def conf(extra: (String, String)*): Configuration = {
    val c = new Configuration(false)
    c.set("aws_access_key_id", server.get("access_key").asText())
    c.set("aws_secret_access_key", server.get("secret_key").asText())
    c.set("aws_endpoint", server.get("endpoint").asText())
    c.set("allow_http", "true")
    extra.foreach { case (k, v) => c.set(k, v) }
    c
  }

  private def io(extra: (String, String)*): S3FileIO = new S3FileIO(S3Config.from(conf(extra: _*)))

  /** A fresh directory in the bucket. */
  private def dir(): String = { n += 1; s"s3://$bucket/t$n-${System.nanoTime()}" }

  private def faults(
      every: Int = 0,
      status: Int = 503,
      ambiguousPuts: Int = 0,
      refuseConditional: Boolean = false,
      slow: Int = 0,
      delay: Double = 0
  ): Unit =
    Pylance.call("s3_ops", "faults", every, status, ambiguousPuts, refuseConditional, slow, delay)

  private def counts(prefix: String): Map[String, Int] =
    Pylance.call("s3_ops", "counts", prefix).fields().asScala
      .map(e => e.getKey -> e.getValue.asInt()).toMap

  override def beforeEach(): Unit = { Pylance.require(); faults() }

  private def bytes(s: String) = s.getBytes(UTF_8)

  test("write, read, ranges, size, exists, delete") {
    val d = dir(); val s3 = io()
    val f = s"$d/a/b.bin"
    assert(!s3.exists(f) && !s3.exists(d))
    s3.write(f, bytes("0123456789"))
    assert(s3.exists(f) && s3.exists(d) && s3.exists(s"$d/a"))
    assert(s3.isDirectory(s"$d/a") && !s3.isDirectory(f))
    assert(s3.size(f) == 10)
    assert(new String(s3.readFully(f), UTF_8) == "0123456789")
    assert(new String(s3.readRange(f, 3, 4), UTF_8) == "3456")
    intercept[LanceCorruptFileException](s3.readRange(f, 8, 4))
    intercept[java.io.FileNotFoundException](s3.readFully(s"$d/missing"))
    assert(s3.delete(f) && !s3.exists(f))
  }

  test("listing: files and directories directly under a path, s3a:// kept, many pages") {
    val d = dir(); val s3 = io()
    Seq("x.txt", "sub/y.txt", "sub/deeper/z.txt", "other/w.txt").foreach(k =>
      s3.write(s"$d/$k", bytes(k))
    )
    val top = s3.list(d).map(e => (e.name, e.isDirectory, e.size)).sortBy(_._1)
    assert(top == Seq(("other", true, 0L), ("sub", true, 0L), ("x.txt", false, 5L)))
    assert(s3.list(s"$d/sub/").map(_.path).sorted == Seq(s"$d/sub/deeper", s"$d/sub/y.txt"))
    assert(s3.list(s"$d/nothing").isEmpty)
    val a = d.replace("s3://", "s3a://")
    assert(s3.list(a).map(_.path).toSet.contains(s"$a/x.txt"))
    val key = d.stripPrefix(s"s3://$bucket/") + "/many"
    Pylance.call("s3_ops", "put_many", bucket, key, 1005)
    assert(s3.list(s"$d/many").map(_.name).sorted == (0 until 1005).map(i => f"k$i%05d"))
  }

  test("racing conditional creates: exactly one writer wins, its bytes stay") {
    val f = s"${dir()}/_versions/1.manifest"
    val pool = Executors.newFixedThreadPool(8)
    try {
      val results = (0 until 8).map { i =>
        pool.submit(new Callable[Boolean] {
          def call(): Boolean = io().createIfAbsent(f, bytes(s"w$i"))
        })
      }.map(_.get())
      assert(results.count(identity) == 1)
      assert(new String(io().readFully(f), UTF_8) == s"w${results.indexOf(true)}")
    } finally pool.shutdown()
  }

  test("a conditional create whose answer was lost is still ours; someone else's is not") {
    val d = dir(); val s3 = io()
    faults(ambiguousPuts = 1) // the PUT lands, its answer is a 500; the retry gets 412
    assert(s3.createIfAbsent(s"$d/m1", bytes("mine")))
    assert(counts(s"$d/m1".stripPrefix(s"s3://$bucket")).getOrElse("PUT", 0) == 2)
    faults()
    assert(!s3.createIfAbsent(s"$d/m1", bytes("theirs")))
    assert(new String(s3.readFully(s"$d/m1"), UTF_8) == "mine")
    faults(ambiguousPuts = 1) // likewise a new data file written as a stream
    val out = s3.create(s"$d/data"); out.write(bytes("data")); out.close()
    assert(new String(s3.readFully(s"$d/data"), UTF_8) == "data")
  }

  test("a store without conditional writes is refused, naming the endpoint option") {
    faults(refuseConditional = true)
    val e = intercept[LanceUnsupportedException](io().createIfAbsent(s"${dir()}/m", bytes("x")))
    assert(e.getMessage.contains("conditional") && e.getMessage.contains("aws_endpoint"))
  }

  test("streams: small objects in one PUT, large ones as multipart uploads") {
    val d = dir(); val s3 = io("s3_part_size" -> "5M")
    val small = s3.create(s"$d/small"); small.write(bytes("tiny")); small.close()
    assert(new String(s3.readFully(s"$d/small"), UTF_8) == "tiny")
    val big = new Array[Byte](11 * 1024 * 1024 + 7)
    new scala.util.Random(7).nextBytes(big)
    val out = s3.create(s"$d/big")
    big.grouped(100000).foreach(c => out.write(c))
    out.close()
    assert(java.util.Arrays.equals(s3.readFully(s"$d/big"), big))
    val c = counts(s"$d/big".stripPrefix(s"s3://$bucket"))
    assert(c.getOrElse("POST", 0) == 2 && c.getOrElse("PUT", 0) == 3, c) // start, 3 parts, end
    intercept[java.nio.file.FileAlreadyExistsException] {
      val again = s3.create(s"$d/small"); again.write(bytes("x")); again.close()
    }
  }

  test("opening a file and reading its tail is one request") {
    val d = dir(); val s3 = io()
    val data = Array.tabulate[Byte](200000)(i => (i % 251).toByte)
    s3.write(s"$d/f", data)
    faults()
    val in = s3.open(s"$d/f")
    assert(in.length == data.length)
    assert(java.util.Arrays.equals(in.read(data.length - 1000, 1000), data.takeRight(1000)))
    assert(counts(s"$d/f".stripPrefix(s"s3://$bucket")) == Map("RANGE_GET" -> 1))
    assert(java.util.Arrays.equals(in.read(10, 100), data.slice(10, 110)))
    in.close()
  }

  test("transient errors are retried; without retries they name the path") {
    val d = dir()
    faults(every = 2)
    val s3 = io()
    s3.write(s"$d/r", bytes("retried"))
    assert(new String(s3.readFully(s"$d/r"), UTF_8) == "retried")
    assert(s3.list(d).map(_.name) == Seq("r"))
    faults(every = 1)
    val e = intercept[java.io.IOException](io("s3_max_retries" -> "0").readFully(s"$d/r"))
    assert(e.getMessage.contains(s"$d/r".stripPrefix("s3://")) && e.getMessage.contains("503"))
  }

  test("a slow answer past the request timeout is retried; a commit still happens once") {
    val d = dir(); val s3 = io("timeout" -> "1s")
    s3.write(s"$d/slow", bytes("x"))
    faults(slow = 1, delay = 2.5)
    assert(new String(s3.readFully(s"$d/slow"), UTF_8) == "x")
    faults(slow = 1, delay = 2.5) // the first PUT is still on its way when the retry lands
    assert(s3.createIfAbsent(s"$d/once", bytes("mine")))
    Thread.sleep(3000)
    assert(new String(s3.readFully(s"$d/once"), UTF_8) == "mine")
    assert(!io().createIfAbsent(s"$d/once", bytes("again")))
  }

  test("the routing FileIO sends s3 and s3a paths to S3 and survives serialization") {
    val d = dir()
    val routed = new RoutingFileIO(conf())
    val copy = {
      val bos = new java.io.ByteArrayOutputStream()
      val oos = new java.io.ObjectOutputStream(bos); oos.writeObject(routed); oos.close()
      new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bos.toByteArray))
        .readObject().asInstanceOf[RoutingFileIO]
    }
    copy.write(s"$d/via-s3a".replace("s3://", "s3a://"), bytes("1"))
    assert(io().exists(s"$d/via-s3a"))
  }
}
