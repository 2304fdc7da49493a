# spark-lance: build, install and test everything from a fresh machine.
#
#   make demo   build the connector, install the Python package into .venv, run demo/demo.py
#   make test   Scala tests (sbt connector/test) + pytest tests/ (after publish-m2)
#
# Needs only Java 17, Python 3 (with venv), curl and network access to Maven Central and PyPI.
# Every step is a file target, so a second run with nothing changed does (almost) nothing.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON3 ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
SBT     := SBT_OPTS="$${SBT_OPTS:--Xmx2g}" build/sbt

VERSION := $(shell sed -n 's/^ThisBuild \/ version := "\(.*\)".*/\1/p' build.sbt)
SCALA_BINARY := 2.13
JAR_NAME := spark-lance_$(SCALA_BINARY)-$(VERSION).jar
JAR      := connector/target/scala-$(SCALA_BINARY)/$(JAR_NAME)
M2_DIR   := $(HOME)/.m2/repository/io/sparklance/spark-lance_$(SCALA_BINARY)/$(VERSION)
M2_JAR   := $(M2_DIR)/$(JAR_NAME)

# Everything the assembly jar is built from.
JAR_SOURCES := build.sbt $(wildcard project/*.sbt project/*.properties project/repositories) \
               $(shell find connector/src/main protos -type f 2>/dev/null)
PY_SOURCES  := python/pyproject.toml python/README.md $(shell find python/spark_lance -name '*.py' -o -name py.typed)

DEPS_STAMP   := $(VENV)/.stamp-deps
PYPKG_STAMP  := $(VENV)/.stamp-spark-lance

.PHONY: help venv jar python publish-m2 test test-scala test-python demo bench clean

help:
	@echo "make demo        build + install, then run demo/demo.py"
	@echo "make test        Scala tests and pytest (builds, installs and publishes to ~/.m2 first)"
	@echo "make venv        .venv with the pinned Python deps (python/requirements-dev.txt)"
	@echo "make jar         $(JAR)"
	@echo "make python      install the spark-lance Python package (with the jar) into .venv"
	@echo "make publish-m2  publish the connector to ~/.m2 (for spark-submit --packages)"
	@echo "make bench       benchmarks -> bench/results/latest.{md,json,png} (BENCH_ARGS='--rows 1000000 --only scan ...')"
	@echo "make clean       remove build outputs and .venv"

# ---- Python virtualenv with the pinned dependencies ------------------------------------------
venv: $(DEPS_STAMP)

$(DEPS_STAMP): python/requirements-dev.txt
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PIP) install --quiet -r python/requirements-dev.txt
	touch $@

# ---- The connector's self-contained assembly jar ----------------------------------------------
jar: $(JAR)

$(JAR): $(JAR_SOURCES)
	$(SBT) connector/assembly < /dev/null
	test -f $@
	touch $@   # sbt-assembly may keep an up-to-date jar as it is; make compares mtimes

# ---- The Python package, installed (not editable) with the jar inside -------------------------
python: $(PYPKG_STAMP)

$(PYPKG_STAMP): $(JAR) $(DEPS_STAMP) $(PY_SOURCES)
	rm -rf python/build python/spark_lance/jars python/*.egg-info
	mkdir -p python/spark_lance/jars
	cp $(JAR) python/spark_lance/jars/$(JAR_NAME)
	$(PIP) install --quiet --no-deps --no-build-isolation --force-reinstall ./python
	rm -rf python/build python/*.egg-info
	cd /tmp && $(CURDIR)/$(PY) -c 'import spark_lance, os; p = spark_lance.jar_path(); assert os.path.isfile(p) and "site-packages" in p, p; print("spark_lance", spark_lance.__version__, "->", p)'
	touch $@

# ---- Maven-style publication to ~/.m2 (what spark-submit --packages resolves) ------------------
publish-m2: $(M2_JAR)

$(M2_JAR): $(JAR)
	rm -rf $(M2_DIR)   # sbt will not overwrite a published release version
	$(SBT) connector/publishM2 < /dev/null
	cmp $(JAR) $@
	touch $@

# ---- Tests -----------------------------------------------------------------------------------
# Both suites always run; the target fails if either failed. pytest runs last so its summary
# line closes the output.
test: python publish-m2
	@scala=0; $(MAKE) --no-print-directory test-scala || scala=$$?; \
	if [ $$scala -ne 0 ]; then echo "make test: Scala tests FAILED (exit $$scala); running pytest anyway" >&2; fi; \
	py=0; $(MAKE) --no-print-directory test-python || py=$$?; \
	[ $$scala -eq 0 ] && [ $$py -eq 0 ]

test-scala:
	$(SBT) connector/test < /dev/null

test-python: $(PYPKG_STAMP)
	$(PY) -m pytest tests $(PYTEST_ARGS)

# ---- Demo and benchmarks -----------------------------------------------------------------------
demo: python
	$(PY) demo/demo.py

# bench/run.sh makes its own bench/.venv (pyspark, pylance, matplotlib; bench/requirements.txt).
bench: $(JAR)
	bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf $(VENV) python/build python/spark_lance/jars python/*.egg-info \
	       connector/target target project/target .pytest_cache
