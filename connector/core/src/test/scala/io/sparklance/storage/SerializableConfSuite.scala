package io.sparklance.storage

import java.io.{
  ByteArrayInputStream,
  ByteArrayOutputStream,
  DataInputStream,
  DataOutputStream,
  ObjectInputStream,
  ObjectOutputStream
}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * A configuration sent through Java serialization arrives with the properties Hadoop's own
 * `write`/`readFields` would give it, values as set (variables unexpanded), long and
 * non-ASCII ones included.
 */
class SerializableConfSuite extends AnyFunSuite {
  private def props(c: Configuration): Map[String, String] =
    c.iterator().asScala.map(e => e.getKey -> e.getValue).toMap

  private def roundTrip(c: Configuration): Configuration = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(new SerializableConf(c))
    out.close()
    val in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray))
    in.readObject().asInstanceOf[SerializableConf].value
  }

  private def hadoopRoundTrip(c: Configuration): Configuration = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    c.write(out)
    out.close()
    val back = new Configuration(false)
    back.readFields(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray)))
    back
  }

  private def sample(defaults: Boolean): Configuration = {
    val c = new Configuration(defaults)
    c.set("fs.s3a.endpoint", "http://localhost:9000")
    c.set("lance.expanded", "${fs.s3a.endpoint}/bucket")
    c.set("lance.long", "x" * 70000 + "é€")
    c.set("lance.unicode.ключ", "値")
    c.set("lance.empty", "")
    c
  }

  test("every property arrives as Hadoop's own write and readFields give it") {
    for (defaults <- Seq(true, false)) {
      val c = sample(defaults)
      val got = roundTrip(c)
      assert(props(got) == props(hadoopRoundTrip(c)), s"defaults=$defaults")
      assert(props(got) == props(c), s"defaults=$defaults")
      assert(got.get("lance.expanded") == c.get("lance.expanded"))
    }
  }

  test("an empty configuration stays empty") {
    assert(props(roundTrip(new Configuration(false))).isEmpty)
  }

  test("the configuration on the sending side is left as it was") {
    val c = sample(defaults = false)
    val before = props(c)
    roundTrip(c)
    assert(props(c) == before)
  }
}
