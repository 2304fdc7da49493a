package io.sparklance.format.legacy

import io.sparklance.format.v20.{FixtureReadSuiteBase, FixtureSupport}

/** Every legacy (0.1) fixture dataset and version, and the external 0.1 datasets, against pylance's rows. */
class LegacyFixtureSuite extends FixtureReadSuiteBase {
  import FixtureSupport._
  register(fixtures(Seq("_legacy")) ++
    externalFixtures().filter(_._3.get("data_storage_version_read").asText() == "0.1"))
}
