package io.sparklance.format.v20

/** Every 2.0 fixture dataset and version (and the external 2.0 dataset) against pylance's rows. */
class V20FixtureSuite extends FixtureReadSuiteBase {
  import FixtureSupport._
  register(fixtures(Seq("_2.0")) ++
    externalFixtures().filter(_._3.get("data_storage_version_read").asText() == "2.0"))
}
