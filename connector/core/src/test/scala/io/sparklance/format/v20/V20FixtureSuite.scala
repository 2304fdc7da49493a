package io.sparklance.format.v20

/** Every 2.0 fixture dataset and version (and the external 2.0 dataset) against pylance's rows. */
class V20FixtureSuite extends FixtureReadSuiteBase {
  import FixtureSupport._
  register(_root_.io.sparklance.testutil.Fixtures.byFormat("2.0"))
}
