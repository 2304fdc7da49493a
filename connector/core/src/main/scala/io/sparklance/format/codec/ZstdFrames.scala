package io.sparklance.format.codec

/**
 * Facts about a bare zstd frame that work with every zstd-jni a Spark line ships: Spark 3.5
 * ships 1.5.5-4, which lacks `Zstd.getFrameContentSize(byte[])`.
 */
private[sparklance] object ZstdFrames {

  /**
   * The frame's declared content size, or -1 when the header does not declare it (or declares
   * zero: the caller then streams the frame, which handles an empty one as well).
   */
  @annotation.nowarn("cat=deprecation")
  def contentSize(frame: Array[Byte]): Long = {
    val n = com.github.luben.zstd.Zstd.decompressedSize(frame)
    if (n > 0) n else -1L
  }
}
