package io.sparklance.spark.write;

import org.apache.spark.TaskContext;
import org.apache.spark.executor.OutputMetrics;

/**
 * Spark's task output metrics (the stage's "Output" bytes and records in the UI), which Spark
 * fills for its own file sources but not for DataSource V2 writes. Their setters are private
 * to Spark in Scala and public in bytecode, so this one call is Java.
 */
public final class TaskOutputMetrics {
  private TaskOutputMetrics() {}

  /** Adds `bytes` and `records` written by the running task; nothing outside a task. */
  public static void add(long bytes, long records) {
    TaskContext context = TaskContext.get();
    if (context == null) return;
    OutputMetrics m = context.taskMetrics().outputMetrics();
    m.setBytesWritten(m.bytesWritten() + bytes);
    m.setRecordsWritten(m.recordsWritten() + records);
  }
}
