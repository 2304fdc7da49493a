package io.sparklance.storage

import java.nio.file.{Files, Path => NioPath}
import java.nio.file.attribute.PosixFilePermissions
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Local writes through [[HadoopFileIO]] (which hands `file:` paths to [[LocalWrites]]) leave
 * what Hadoop's own local file system leaves: the same files, the same modes on files and on
 * every directory created, for the default umask and a configured one; creates refuse an
 * existing file, writes replace, and of racing `createIfAbsent`s exactly one wins.
 */
class LocalWritesSuite extends AnyFunSuite {
  private def withDir(body: NioPath => Unit): Unit = {
    val dir = Files.createTempDirectory("local-writes")
    try body(dir)
    finally {
      Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.delete(p))
    }
  }

  private def mode(p: NioPath): String = PosixFilePermissions.toString(
    Files.getPosixFilePermissions(p)
  )

  private def conf(umask: Option[String]): Configuration = {
    val c = new Configuration()
    // A file system instance of this configuration's own (Hadoop caches one per scheme).
    c.setBoolean("fs.file.impl.disable.cache", true)
    umask.foreach(c.set("fs.permissions.umask-mode", _))
    c
  }

  /** Every path below `root` with its mode, and each file's bytes. */
  private def tree(root: NioPath): Map[String, (String, Seq[Byte])] =
    Files.walk(root).iterator().asScala.filter(_ != root).map { p =>
      root.relativize(p).toString ->
        (mode(p), if (Files.isDirectory(p)) Seq.empty[Byte] else Files.readAllBytes(p).toSeq)
    }.toMap

  for (umask <- Seq(None, Some("077"), Some("002"))) {
    test(s"files and directories as Hadoop's local file system makes them (umask $umask)") {
      withDir { dir =>
        val c = conf(umask)
        val ours = dir.resolve("ours")
        val hadoop = dir.resolve("hadoop")
        val io = new HadoopFileIO(c)
        val raw = FileSystem.getLocal(c).getRawFileSystem
        def hp(root: NioPath, rel: String) = new Path(root.resolve(rel).toUri)

        val out = io.create(ours.resolve("data/a/f.lance").toUri.toString)
        out.write(Array[Byte](1, 2, 3)); out.close()
        io.write(ours.resolve("_versions/hint.json").toString, Array[Byte](4))
        assert(io.createIfAbsent("file:" + ours.resolve("_versions/1.manifest"), Array[Byte](5)))

        val h1 = raw.create(hp(hadoop, "data/a/f.lance"), false)
        h1.write(Array[Byte](1, 2, 3)); h1.close()
        val h2 = raw.create(hp(hadoop, "_versions/hint.json"), true)
        h2.write(Array[Byte](4)); h2.close()
        val h3 = raw.create(hp(hadoop, "_versions/1.manifest"), false)
        h3.write(Array[Byte](5)); h3.close()

        assert(tree(ours) == tree(hadoop))
        assert(mode(ours) == mode(hadoop))
      }
    }
  }

  test("create refuses an existing file; write replaces one") {
    withDir { dir =>
      val io = new HadoopFileIO(new Configuration())
      val f = dir.resolve("x/f").toString
      io.create(f).close()
      intercept[java.nio.file.FileAlreadyExistsException](io.create(f))
      io.write(f, Array[Byte](7, 8))
      io.write(f, Array[Byte](9))
      assert(Files.readAllBytes(dir.resolve("x/f")).toSeq == Seq[Byte](9))
    }
  }

  test("a file where a directory must be: Hadoop's ParentNotDirectoryException, naming both") {
    withDir { dir =>
      Files.write(dir.resolve("data"), Array[Byte](1))
      val io = new HadoopFileIO(new Configuration())
      // Hadoop's own local file system refuses these too.
      val fs = FileSystem.get(dir.toUri, conf(None))
      intercept[java.io.IOException](fs.create(new Path(dir.resolve("data/x/f").toUri), false))
      for (
        write <- Seq[String => Unit](
          io.create(_).close(),
          io.write(_, Array[Byte](2)),
          io.createIfAbsent(_, Array[Byte](3))
        )
      ) {
        val f = dir.resolve("data/x/f").toString
        val e = intercept[org.apache.hadoop.fs.ParentNotDirectoryException](write(f))
        assert(
          e.getMessage.contains(f) && e.getMessage.contains(dir.resolve("data").toString) &&
            e.getMessage.contains("is a file, not a directory"),
          e.getMessage
        )
      }
      assert(Files.readAllBytes(dir.resolve("data")).toSeq == Seq[Byte](1))
      assert(Files.list(dir).count() == 1)
    }
  }

  test(
    "of racing createIfAbsent calls exactly one wins, with its bytes, and no temporary file stays"
  ) {
    withDir { dir =>
      val io = new HadoopFileIO(new Configuration())
      val pool = Executors.newFixedThreadPool(8)
      try {
        for (round <- 0 until 20) {
          val target = dir.resolve(s"v/$round.manifest").toString
          val start = new CountDownLatch(1)
          val tries = (0 until 8).map { i =>
            pool.submit(() => {
              start.await(); io.createIfAbsent(target, Array.fill(1000)(i.toByte))
            })
          }
          start.countDown()
          val won = tries.map(_.get(30, TimeUnit.SECONDS)).zipWithIndex.filter(_._1).map(_._2)
          assert(won.size == 1, s"round $round")
          assert(Files.readAllBytes(dir.resolve(s"v/$round.manifest")).toSeq ==
            Seq.fill(1000)(won.head.toByte))
        }
        assert(Files.list(dir.resolve("v")).iterator().asScala.forall(
          !_.getFileName.toString.startsWith(".tmp")
        ))
      } finally pool.shutdownNow()
    }
  }

  test("permissions of a mode: owner, group and others from the high bit down") {
    assert(PosixFilePermissions.toString(LocalWrites.permissions(Integer.parseInt("640", 8))) ==
      "rw-r-----")
    assert(PosixFilePermissions.toString(LocalWrites.permissions(Integer.parseInt("751", 8))) ==
      "rwxr-x--x")
  }
}
