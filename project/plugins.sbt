// Every plugin here must be published to Maven Central (see project/repositories).
addSbtPlugin("com.eed3si9n" % "sbt-assembly" % "2.3.1")
addSbtPlugin("com.thesamet" % "sbt-protoc" % "1.0.8")
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.4")
