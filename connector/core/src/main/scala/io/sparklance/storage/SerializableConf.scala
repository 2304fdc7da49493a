package io.sparklance.storage

import java.io.{ObjectInputStream, ObjectOutputStream}

import org.apache.hadoop.conf.Configuration

/**
 * A Hadoop configuration that travels to executors: Configuration is Writable, not
 * Serializable, so it is written by hand.
 */
final class SerializableConf(@transient private var conf: Configuration) extends Serializable {
  def value: Configuration = conf

  private def writeObject(out: ObjectOutputStream): Unit = {
    out.defaultWriteObject()
    conf.write(out)
  }

  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    conf = new Configuration(false)
    conf.readFields(in)
  }
}
