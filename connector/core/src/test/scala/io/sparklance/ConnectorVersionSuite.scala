package io.sparklance

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.Fixtures

class ConnectorVersionSuite extends AnyFunSuite {
  test("the version is the repository's VERSION file, as the build wrote it") {
    val expected =
      new String(Files.readAllBytes(Fixtures.repoRoot.resolve("VERSION")), "UTF-8").trim
    assert(ConnectorVersion.value == expected)
    assert(table.txn.CommitOptions().writerVersion == expected)
  }
}
