package io.sparklance.table.txn

import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

/**
 * Our UpdateConfig against pylance's `update_config`, `delete_config_keys`,
 * `update_metadata`, `update_schema_metadata` and `update_field_metadata`, and its conflicts
 * against pylance's for the same pairs.
 */
class UpdateConfigSuite extends TwinDatasetSuite {
  test("config keys set, then changed and removed, as pylance's") {
    val (ours, theirs) = twins()
    commit(ours, _ => UpdateConfig(config = Some(UpdateMap.set(Map("a" -> "1", "b" -> "2")))))
    pylance("update_config", theirs, JMap.of("a", "1", "b", "2"), jlist())
    assertTwins(ours, theirs)
    commit(ours, _ => UpdateConfig(config = Some(UpdateMap.set(Map("b" -> "3")))))
    commit(ours, _ => UpdateConfig(config = Some(UpdateMap.remove(Seq("a")))))
    pylance("update_config", theirs, JMap.of("b", "3"), jlist())
    pylance("update_config", theirs, JMap.of(), jlist("a"))
    assertTwins(ours, theirs)
    assert(latest(ours).manifest.getConfigMap.asScala.toMap ==
      describe(theirs).get("config").fields().asScala.map(e => e.getKey -> e.getValue.asText)
        .toMap)
  }

  test("table, schema and field metadata, as pylance's") {
    val (ours, theirs) = twins()
    val v = latest(ours).schema.field("v").get.id
    commit(ours, _ => UpdateConfig(tableMetadata = Some(UpdateMap.set(Map("tm" -> "1")))))
    commit(ours, _ => UpdateConfig(schemaMetadata = Some(UpdateMap.set(Map("sm" -> "2")))))
    commit(ours, _ => UpdateConfig(fieldMetadata = Map(v -> UpdateMap.set(Map("fm" -> "3")))))
    pylance(
      "update_metadata",
      theirs,
      JMap.of("tm", "1"),
      JMap.of("sm", "2"),
      "v",
      JMap.of("fm", "3")
    )
    assertTwins(ours, theirs)
  }

  test("one update map mixing sets and removals, and a replacing one, as Lance applies them") {
    val m = Map("a" -> "1", "b" -> "2", "c" -> "3")
    assert(UpdateMap(Seq("a" -> None, "b" -> Some("9"), "d" -> Some("4")))
      .applyTo(m, identity[String]) == Map("b" -> "9", "c" -> "3", "d" -> "4"))
    assert(UpdateMap(Seq("a" -> None, "d" -> Some("4")), replace = true)
      .applyTo(m, identity[String]) == Map("d" -> "4"))
    val p = UpdateMap(Seq("a" -> None, "d" -> Some("4")), replace = true)
    assert(UpdateMap.fromProto(p.toProto) == p)
  }

  test("metadata of a field that does not exist is refused, naming the id") {
    val (ours, _) = twins()
    val e = intercept[io.sparklance.LanceSchemaMismatchException] {
      commit(ours, _ => UpdateConfig(fieldMetadata = Map(99 -> UpdateMap.set(Map("x" -> "y")))))
    }
    assert(e.getMessage.contains("99"))
  }

  // pylance sets k=1; our UpdateConfig, read before that, commits next. pylance alone (a
  // handle opened at the read version doing the same change) gives the expected outcome.
  private val pairs: Seq[(String, Map[String, String], Seq[String])] = Seq(
    ("the same key set to another value", Map("k" -> "2"), Nil),
    ("the same key set to the same value", Map("k" -> "1"), Nil),
    ("the same key removed", Map.empty, Seq("k")),
    ("another key set", Map("j" -> "2"), Nil),
    ("another key removed", Map.empty, Seq("j"))
  )

  for ((what, set, remove) <- pairs) {
    test(s"pylance sets config key k, then our UpdateConfig ($what) from the same version") {
      val (ours, theirs) = twins()
      val read = latest(ours)
      Seq(ours, theirs).foreach(p => pylance("update_config", p, JMap.of("k", "1"), jlist()))
      val op = UpdateConfig(config =
        Some(
          if (set.nonEmpty) UpdateMap.set(set) else UpdateMap.remove(remove)
        )
      )
      val got = outcome(ours, read, op)
      val want =
        pylance("stale_update_config", theirs, read.version, set.asJava, remove.asJava).asText()
      assert(got == want)
      if (want == "ok") assertTwins(ours, theirs)
    }
  }
}
