package io.sparklance.testutil;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.scalatest.TagAnnotation;

/**
 * A suite that runs on the default Scala line only: long, and nothing in it differs per Scala
 * version (byte-level format work, pylance comparisons the default line already makes). CI's
 * matrix leaves it out on the other lines ({@code -l io.sparklance.testutil.DefaultLineOnly});
 * {@code make test-matrix} runs it everywhere. The counterpart of pytest's default_line_only.
 */
@TagAnnotation
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface DefaultLineOnly {}
