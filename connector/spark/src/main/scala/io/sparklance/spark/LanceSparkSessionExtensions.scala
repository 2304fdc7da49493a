package io.sparklance.spark

import org.apache.spark.sql.SparkSessionExtensions

import io.sparklance.spark.vector.LanceNearestFunction

/**
 * The connector's SQL additions, for `spark.sql.extensions` (which `spark_lance.configure`
 * sets): path names ``lance.`/path` `` without a `lance` catalog ([[LancePathNames]]), the
 * table-valued function `lance_nearest` ([[LanceNearestFunction]]) and the
 * optimizer rules [[PruneExistsColumns]], [[SemiJoinReduction]], [[KeepFiltersForPruning]],
 * [[InSubqueryPruning]], [[ExistsPruning]], [[LikePushDown]] and, before scan push-down,
 * [[JoinedKeyPruning]] and [[FilteredJoinPruning]]; and among the adaptive query-stage rules
 * [[PruningSubqueriesAsSubqueries]], which keeps their pruning subqueries from hanging a query.
 * {{{
 * spark-submit --conf spark.sql.extensions=io.sparklance.spark.LanceSparkSessionExtensions
 * }}}
 */
class LanceSparkSessionExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // A jar of another Spark line adds nothing: its code cannot run in this session (the data
    // source explains why when it is used).
    if (!SparkLineCheck.fits()) return
    extensions.injectParser(LancePathNames.wrap)
    extensions.injectTableFunction(LanceNearestFunction.description)
    extensions.injectOptimizerRule(_ => PruneExistsColumns)
    extensions.injectOptimizerRule(_ => SemiJoinReduction)
    extensions.injectOptimizerRule(_ => KeepFiltersForPruning)
    extensions.injectOptimizerRule(_ => InSubqueryPruning)
    extensions.injectOptimizerRule(_ => ExistsPruning)
    extensions.injectOptimizerRule(_ => LikePushDown)
    extensions.injectPreCBORule(_ => JoinedKeyPruning)
    extensions.injectPreCBORule(_ => FilteredJoinPruning)
    extensions.injectQueryStageOptimizerRule(_ => PruningSubqueriesAsSubqueries)
  }
}
