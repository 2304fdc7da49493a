package io.sparklance.format.writer

import io.sparklance.format.LanceField

/** Checks the `lance-encoding:*` metadata of a schema before anything is written. */
object FieldEncodings {
  def validate(fields: Seq[LanceField]): Unit =
    fields.foreach(top => LeafPath.leaves(top).foreach(lp => EncodingParams.of(lp.leaf, top)))
}
