package io.sparklance.storage.s3

import java.io.{FileNotFoundException, IOException}
import java.nio.file.FileAlreadyExistsException

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.storage.{CoalescingInput, FileEntry, FileIO, RandomAccessInput}

/**
 * FileIO on S3 (`s3://bucket/key`, and `s3a://` for paths Spark users already write) through
 * S3's REST API. Commits are safe: `createIfAbsent` is a conditional PUT
 * (`If-None-Match: *`), which S3 performs exactly once, as pylance commits on S3 — never a
 * copy-and-delete "rename" two writers can both win. Directories are key prefixes.
 */
final class S3FileIO(val config: S3Config) extends FileIO {
  import S3FileIO._

  @transient private lazy val client = new S3Client(config)

  override def exists(path: String): Boolean = {
    val l = S3Location(path)
    if (l.key.isEmpty) return bucketExists(l)
    val r = client.call("HEAD", l.bucket, l.key)
    r.status match {
      case 200 => true
      case 404 => hasChildren(l)
      case _ => throw S3Errors.failure("HEAD", path, r)
    }
  }

  override def isDirectory(path: String): Boolean = {
    val l = S3Location(path)
    if (l.key.isEmpty) bucketExists(l) else hasChildren(l)
  }

  private def bucketExists(l: S3Location): Boolean = {
    val r = client.call("HEAD", l.bucket, "")
    r.status match {
      case 200 => true
      case 404 => false
      case _ => throw S3Errors.failure("HEAD", l.url, r)
    }
  }

  private def hasChildren(l: S3Location): Boolean = {
    val p = listPage(l.bucket, l.dirPrefix, None, maxKeys = 1)
    p.objects.nonEmpty || p.prefixes.nonEmpty
  }

  private def listPage(
      bucket: String,
      prefix: String,
      token: Option[String],
      maxKeys: Int = 1000
  ): S3Xml.ListPage = {
    val q = Seq(
      "list-type" -> "2",
      "prefix" -> prefix,
      "delimiter" -> "/",
      "max-keys" -> maxKeys.toString
    ) ++ token.map("continuation-token" -> _)
    val r = client.call("GET", bucket, "", q)
    if (r.status == 404 && S3Errors.code(r).contains("NoSuchBucket"))
      return S3Xml.ListPage(Nil, Nil, None)
    if (r.status != 200) throw S3Errors.failure("LIST", s"s3://$bucket/$prefix", r)
    S3Xml.listPage(r.body)
  }

  override def list(dir: String): Seq[FileEntry] = {
    val l = S3Location(dir)
    val prefix = l.dirPrefix
    val out = Seq.newBuilder[FileEntry]
    var token: Option[String] = None
    var first = true
    while (first || token.isDefined) {
      first = false
      val page = listPage(l.bucket, prefix, token)
      page.objects.filter(_.key != prefix).foreach { o =>
        val name = o.key.substring(prefix.length)
        out += FileEntry(l.child(name), name, o.size, isDirectory = false, o.modified)
      }
      page.prefixes.foreach { p =>
        val name = p.substring(prefix.length).stripSuffix("/")
        if (name.nonEmpty) out += FileEntry(l.child(name), name, 0L, isDirectory = true, 0L)
      }
      token = page.next
    }
    out.result()
  }

  override def size(path: String): Long = {
    val l = S3Location(path)
    val r = client.call("HEAD", l.bucket, l.key)
    if (r.status != 200) throw S3Errors.failure("HEAD", path, r)
    r.header("content-length").map(_.toLong).getOrElse(
      throw new IOException(s"S3 HEAD $path answered without a Content-Length")
    )
  }

  override def readFully(path: String): Array[Byte] = {
    val l = S3Location(path)
    val r = client.call("GET", l.bucket, l.key)
    if (r.status != 200) throw S3Errors.failure("GET", path, r)
    r.body
  }

  override def readRange(path: String, offset: Long, length: Int): Array[Byte] = {
    if (length == 0) return Array.emptyByteArray
    val l = S3Location(path)
    val r = client.call(
      "GET",
      l.bucket,
      l.key,
      headers = Seq("Range" -> s"bytes=$offset-${offset + length - 1}")
    )
    if (r.status == 416) throw LanceErrors.corruptFile(
      path,
      s"read of $length bytes at offset $offset is outside the file"
    )
    if (r.status != 206 && r.status != 200) throw S3Errors.failure("GET", path, r)
    val body =
      if (r.status == 200) slice(r.body, offset, length, path) // a server that ignores Range
      else r.body
    if (body.length != length) throw LanceErrors.corruptFile(
      path,
      s"read of $length bytes at offset $offset returned ${body.length} bytes"
    )
    body
  }

  private def slice(all: Array[Byte], offset: Long, length: Int, path: String): Array[Byte] = {
    if (offset + length > all.length) throw LanceErrors.corruptFile(
      path,
      s"read of $length bytes at offset $offset is outside the file (size ${all.length} bytes)"
    )
    java.util.Arrays.copyOfRange(all, offset.toInt, offset.toInt + length)
  }

  override def open(path: String): RandomAccessInput =
    new CoalescingInput(new S3Input(this, path))

  override def openSized(path: String, size: Long): RandomAccessInput =
    new CoalescingInput(new S3Input(this, path, size))

  /** The last `n` bytes of `path` and its length, in one request. */
  private[s3] def tail(path: String, n: Int): (Array[Byte], Long) = {
    val l = S3Location(path)
    val r = client.call("GET", l.bucket, l.key, headers = Seq("Range" -> s"bytes=-$n"))
    r.status match {
      case 206 =>
        val total = r.header("content-range").flatMap(_.split('/').lastOption)
          .map(_.trim.toLong).getOrElse(throw new IOException(
            s"S3 GET $path answered a range without a Content-Range"
          ))
        (r.body, total)
      case 200 => (r.body.takeRight(n), r.body.length.toLong)
      case 416 => (Array.emptyByteArray, 0L) // an empty object
      case _ => throw S3Errors.failure("GET", path, r)
    }
  }

  override def createIfAbsent(path: String, bytes: Array[Byte]): Boolean = {
    val l = S3Location(path)
    var conflicts = 0
    while (true) {
      val r =
        client.call("PUT", l.bucket, l.key, headers = Seq("If-None-Match" -> "*"), body = bytes)
      r.status match {
        case 200 => return true
        case 412 =>
          // Taken. If a retried PUT of ours won the first time, the object holds our bytes.
          val ours = holds(path, bytes)
          if (ours) log.info(s"$path: the conditional PUT had already succeeded on a retry")
          return ours
        case 409 if conflicts < config.maxRetries =>
          // ConditionalRequestConflict: another conditional write of this key is in flight.
          conflicts += 1
          Thread.sleep(S3Client.backoffMillis(conflicts))
        case _ if refusesConditions(r) && l.scheme == "s3+ddb" =>
          // Manifests commit through DynamoDB; what else is created here has a unique name
          // (transactions) or tolerates a race as pylance's own writes there do (tags).
          if (exists(path)) return false
          write(path, bytes)
          return true
        case _ if refusesConditions(r) =>
          throw LanceErrors.unsupported(s"The S3 endpoint ${config.endpoint.getOrElse("aws")} " +
            s"does not support conditional writes (If-None-Match), so a commit of $path " +
            "could silently replace another writer's version. Use an endpoint that supports " +
            "them (aws_endpoint / fs.s3a.endpoint), or commit through DynamoDB as pylance " +
            "does: s3+ddb://bucket/path?ddbTableName=<table>.")
        case _ => throw S3Errors.failure("PUT", path, r)
      }
    }
    false
  }

  override def write(path: String, bytes: Array[Byte]): Unit = {
    val l = S3Location(path)
    val r = client.call("PUT", l.bucket, l.key, body = bytes)
    if (r.status != 200) throw S3Errors.failure("PUT", path, r)
  }

  override def create(path: String): java.io.OutputStream = new S3OutputStream(this, path)

  override def delete(path: String): Boolean = {
    val l = S3Location(path)
    if (l.key.isEmpty) return false
    val r = client.call("DELETE", l.bucket, l.key)
    r.status match {
      case 200 | 204 => true
      case 404 => false
      case _ => throw S3Errors.failure("DELETE", path, r)
    }
  }

  // ---- multipart uploads, for S3OutputStream ----

  private[s3] def putNew(path: String, bytes: Array[Byte]): Unit = {
    val l = S3Location(path)
    val first =
      client.call("PUT", l.bucket, l.key, headers = Seq("If-None-Match" -> "*"), body = bytes)
    // Data files have names no other writer picks, so on a store without conditional writes
    // a plain PUT is safe for them (the commit itself is still refused there).
    val r = if (refusesConditions(first)) client.call("PUT", l.bucket, l.key, body = bytes)
    else first
    // A 412 after a retry may answer our own first PUT, whose response was lost.
    if (r.status == 412 && !holds(path, bytes)) throw new FileAlreadyExistsException(path)
    if (r.status != 200 && r.status != 412) throw S3Errors.failure("PUT", path, r)
  }

  /** The answer of a store that does not do conditional writes. */
  private def refusesConditions(r: S3Response): Boolean =
    (r.status == 501 || r.status == 400) &&
      S3Errors.code(r).exists(c => c == "NotImplemented" || c == "InvalidArgument")

  /** Whether the object at `path` holds exactly `bytes`. */
  private def holds(path: String, bytes: Array[Byte]): Boolean =
    try java.util.Arrays.equals(readFully(path), bytes)
    catch { case _: FileNotFoundException => false }

  private[s3] def startUpload(path: String): String = {
    val l = S3Location(path)
    val r = client.call("POST", l.bucket, l.key, Seq("uploads" -> ""))
    if (r.status != 200) throw S3Errors.failure("CreateMultipartUpload", path, r)
    S3Xml.uploadId(r.body)
  }

  private[s3] def uploadPart(path: String, id: String, part: Int, bytes: Array[Byte]): String = {
    val l = S3Location(path)
    val r = client.call(
      "PUT",
      l.bucket,
      l.key,
      Seq("partNumber" -> part.toString, "uploadId" -> id),
      body = bytes
    )
    if (r.status != 200) throw S3Errors.failure("UploadPart", path, r)
    r.header("etag").getOrElse(throw new IOException(s"S3 UploadPart $path: no ETag"))
  }

  private[s3] def completeUpload(path: String, id: String, etags: Seq[String], size: Long): Unit = {
    val l = S3Location(path)
    val r =
      client.call("POST", l.bucket, l.key, Seq("uploadId" -> id), body = S3Xml.completeBody(etags))
    // A retried completion finds the upload gone when the first one succeeded unanswered.
    val done = r.status == 404 && S3Errors.code(r).contains("NoSuchUpload") &&
      (try this.size(path) == size
      catch { case _: FileNotFoundException => false })
    // CompleteMultipartUpload can fail after a 200 status line: the error is in the body.
    if (!done && (r.status != 200 || S3Errors.code(r).isDefined))
      throw S3Errors.failure("CompleteMultipartUpload", path, r)
  }

  private[s3] def abortUpload(path: String, id: String): Unit = {
    val l = S3Location(path)
    try client.call("DELETE", l.bucket, l.key, Seq("uploadId" -> id))
    catch { case e: IOException => log.warn(s"aborting the upload of $path: ${e.getMessage}") }
  }
}

object S3FileIO {
  private val log = LoggerFactory.getLogger(classOf[S3FileIO])

  /** `s3+ddb` is S3 whose commits go through DynamoDB (pylance's external manifest store). */
  val Schemes: Set[String] = Set("s3", "s3a", "s3+ddb")
}
