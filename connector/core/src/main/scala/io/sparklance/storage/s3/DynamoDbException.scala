package io.sparklance.storage.s3

import java.io.IOException

/** A DynamoDB error answer: HTTP status and the exception name (`__type` without namespace). */
final class DynamoDbException(val status: Int, val errorType: String, message: String)
    extends IOException(message)
