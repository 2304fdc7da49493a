package io.sparklance.format.legacy

import io.sparklance.format.v20.{FixtureReadSuiteBase, FixtureSupport}

/** Every legacy (0.1) fixture dataset and version, and the external 0.1 datasets, against pylance's rows. */
class LegacyFixtureSuite extends FixtureReadSuiteBase {
  import FixtureSupport._
  register(_root_.io.sparklance.testutil.Fixtures.byFormat("legacy"))
}
