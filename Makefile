# spark-lance: build, install and test everything from a fresh machine.
#
#   make demo         build the connector, install the Python package into .venv, run demo/demo.py
#   make test         Scala tests and pytest on the default Spark line (newest 4.x)
#   make test-matrix  Scala tests of every built line + pytest's line smoke on every pyspark line
#   make wheel        dist/spark_lance-<version>-py3-none-any.whl carrying the jar of every line
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

VERSION := $(shell cat VERSION)

# ---- Spark lines ------------------------------------------------------------------------------
# A built line is <spark line>_<scala binary>; its sbt project is spark<line without dots>_<scala
# without dots> (build.sbt). The 4.0 build serves Spark 4.0-4.3.
BUILT_LINES  := 3.5_2.12 3.5_2.13 4.0_2.13
DEFAULT_LINE := 4.0_2.13
# pyspark versions the matrix runs (pyspark 3.5 is built with Scala 2.12), and the default one.
PYSPARK_LINES   := 3.5.9 4.0.1 4.1.4 4.2.1 4.3.0
DEFAULT_PYSPARK := 4.3.0
# pytest workers (pytest-xdist), each with its own Spark session: one per core, at most 4.
# --dist loadscope keeps a module's tests in one worker, so its module-scoped fixtures
# (datasets, servers, clusters) are built once.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
# What CI's matrix runs besides the default line (the rest: `make test-matrix`): the Scala
# suites of those lines but the ones tagged DefaultLineOnly, and pytest's line smoke.
CI_PYSPARK_LINES := 3.5.9 4.0.1
CI_SCALA_LINES   := 3.5_2.12
CI_SCALA_TEST    := testOnly -- -l io.sparklance.testutil.DefaultLineOnly

sbt_project = spark$(subst .,,$(1))
line_scala  = $(word 2,$(subst _, ,$(1)))
jar_name    = spark-lance-$(1)-$(VERSION).jar
jar_path    = connector/target/$(call sbt_project,$(1))/scala-$(call line_scala,$(1))/$(call jar_name,$(1))
m2_jar      = $(HOME)/.m2/repository/io/sparklance/spark-lance-$(1)/$(VERSION)/$(call jar_name,$(1))

JARS    := $(foreach l,$(BUILT_LINES),$(call jar_path,$(l)))
M2_JARS := $(foreach l,$(BUILT_LINES),$(call m2_jar,$(l)))
JAR     := $(call jar_path,$(DEFAULT_LINE))
WHEEL   := dist/spark_lance-$(VERSION)-py3-none-any.whl

# Everything the jars are built from.
JAR_SOURCES := build.sbt VERSION $(wildcard project/*.sbt project/*.scala project/*.properties) \
               project/repositories $(shell find connector/core/src/main connector/spark/src/main \
               protos -type f 2>/dev/null)
PY_SOURCES  := python/pyproject.toml python/setup.py python/README.md \
               $(shell find python/spark_lance -name '*.py' -o -name py.typed)

DEPS_STAMP   := $(VENV)/.stamp-deps
PYPKG_STAMP  := $(VENV)/.stamp-spark-lance
JARS_STAMP   := connector/target/.stamp-jars
M2_STAMP     := connector/target/.stamp-m2

.PHONY: help venv jar jars wheel python publish-m2 test test-scala test-python test-matrix \
        test-matrix-ci ci-venvs lint demo bench clean

help:
	@echo "make demo         build + install, then run demo/demo.py"
	@echo "make test         Scala tests and pytest on the default line (builds, installs, publishes)"
	@echo "make test-matrix  Scala tests of every built line, pytest line smoke on pyspark $(PYSPARK_LINES)"
	@echo "make lint         scalafmt and ruff: formatting and lint (.scalafmt.conf, ruff.toml)"
	@echo "make venv         .venv with the pinned Python deps (python/requirements-dev.txt)"
	@echo "make jars         the connector jar of every line: $(BUILT_LINES)"
	@echo "make wheel        $(WHEEL) (every line's jar inside)"
	@echo "make python       install the wheel into .venv"
	@echo "make publish-m2   publish every line to ~/.m2 (for spark-submit --packages)"
	@echo "make bench        benchmarks -> bench/results/latest.{md,json,png} (BENCH_ARGS=..., LINE=4.0_2.13)"
	@echo "make clean        remove build outputs and venvs"

# ---- Python virtualenvs with the pinned dependencies ------------------------------------------
# .venv runs the default pyspark; .venv-<pyspark> the same pins with another pyspark. No
# bytecode at install time (--no-compile): Python compiles what it imports, a small part.
venv: $(DEPS_STAMP)

$(DEPS_STAMP): python/requirements-dev.txt
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PIP) install --quiet --no-compile -r python/requirements-dev.txt
	touch $@

.venv-%/.stamp-deps: python/requirements-dev.txt
	test -x .venv-$*/bin/python || $(PYTHON3) -m venv .venv-$*
	sed 's/^pyspark==.*/pyspark==$*/' python/requirements-dev.txt > .venv-$*/requirements.txt
	.venv-$*/bin/python -m pip install --quiet --no-compile -r .venv-$*/requirements.txt
	touch $@

# ---- The connector's self-contained jars, one per line ------------------------------------------
jar: jars
jars: $(JARS_STAMP)

$(JARS_STAMP): $(JAR_SOURCES)
	$(SBT) $(foreach l,$(BUILT_LINES),$(call sbt_project,$(l))/assembly) < /dev/null
	for j in $(JARS); do test -f $$j; touch $$j; done
	touch $@

# ---- The wheel: the Python package with every line's jar ---------------------------------------
wheel: $(WHEEL)

$(WHEEL): $(JARS_STAMP) $(DEPS_STAMP) $(PY_SOURCES)
	rm -rf python/build python/spark_lance/jars python/*.egg-info
	mkdir -p python/spark_lance/jars dist
	cp $(JARS) python/spark_lance/jars/
	rm -f dist/spark_lance-*.whl
	$(PIP) wheel --quiet --no-deps --no-build-isolation -w dist ./python
	rm -rf python/build python/*.egg-info
	test -f $@

# ---- The wheel installed into .venv ---------------------------------------------------------------
python: $(PYPKG_STAMP)

$(PYPKG_STAMP): $(WHEEL) $(DEPS_STAMP)
	$(PIP) install --quiet --no-deps --force-reinstall $(WHEEL)
	cd /tmp && $(CURDIR)/$(PY) -c 'import spark_lance, os; p = spark_lance.jar_path(); assert os.path.isfile(p) and "site-packages" in p, p; print("spark_lance", spark_lance.__version__, "->", p)'
	touch $@

.venv-%/.stamp-spark-lance: $(WHEEL) .venv-%/.stamp-deps
	.venv-$*/bin/python -m pip install --quiet --no-deps --force-reinstall $(WHEEL)
	touch $@

# ---- Maven-style publication to ~/.m2 (what spark-submit --packages resolves) ------------------
publish-m2: $(M2_STAMP)

$(M2_STAMP): $(JARS_STAMP)
	rm -rf $(foreach l,$(BUILT_LINES),$(dir $(call m2_jar,$(l))))  # sbt will not overwrite a release
	$(SBT) $(foreach l,$(BUILT_LINES),$(call sbt_project,$(l))/publishM2) < /dev/null
	for l in $(BUILT_LINES); do \
	  cmp connector/target/spark$${l//./}/scala-$${l#*_}/spark-lance-$$l-$(VERSION).jar \
	      $(HOME)/.m2/repository/io/sparklance/spark-lance-$$l/$(VERSION)/spark-lance-$$l-$(VERSION).jar; \
	done
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
	$(SBT) core_213/test $(call sbt_project,$(DEFAULT_LINE))/test < /dev/null

test-python: $(PYPKG_STAMP)
	$(PY) -m pytest tests -n $(PYTEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

# Scala tests of the given built lines (sbt's test command $(3)), then pytest's line smoke
# (tests/conftest.py) on the given pyspark lines; every part runs, the target fails if any failed.
define run_matrix
	@failed=""; \
	for l in $(1); do \
	  echo "==== Scala tests: Spark line $$l"; \
	  core=core_$${l#*_}; core=$${core//./}; \
	  $(SBT) "$$core/$(3)" "spark$${l//./}/$(3)" < /dev/null || failed="$$failed scala-$$l"; \
	done; \
	for v in $(2); do \
	  echo "==== pytest line smoke: pyspark $$v"; \
	  $(MAKE) --no-print-directory .venv-$$v/.stamp-spark-lance || { failed="$$failed venv-$$v"; continue; }; \
	  .venv-$$v/bin/python -m pytest tests --line-smoke -n $(PYTEST_WORKERS) --dist loadscope \
	    $(PYTEST_ARGS) || failed="$$failed pytest-$$v"; \
	done; \
	if [ -n "$$failed" ]; then echo "matrix FAILED:$$failed" >&2; exit 1; fi
endef

test-matrix: python publish-m2
	$(call run_matrix,$(filter-out $(DEFAULT_LINE),$(BUILT_LINES)),$(filter-out $(DEFAULT_PYSPARK),$(PYSPARK_LINES)),test)

test-matrix-ci: python publish-m2
	$(call run_matrix,$(CI_SCALA_LINES),$(CI_PYSPARK_LINES),$(CI_SCALA_TEST))

# The venvs of CI's other pyspark lines: mostly downloads, so .ci/run builds them in the
# background while the jars compile.
ci-venvs: $(foreach v,$(CI_PYSPARK_LINES),.venv-$(v)/.stamp-deps)

# ---- Style: `build/sbt scalafmtAll scalafmtSbt`, `ruff format .` and `ruff check --fix .` mend
# what these report (.scalafmt.conf, ruff.toml). Every check runs; the target fails if any did.
lint: $(DEPS_STAMP)
	@failed=""; \
	$(SBT) scalafmtCheckAll scalafmtSbtCheck < /dev/null || failed="$$failed scalafmt"; \
	$(PY) -m ruff format --check --diff . || failed="$$failed ruff-format"; \
	$(PY) -m ruff check . || failed="$$failed ruff-check"; \
	if [ -n "$$failed" ]; then echo "lint FAILED:$$failed" >&2; exit 1; fi

# ---- Demo and benchmarks -----------------------------------------------------------------------
demo: python
	$(PY) demo/demo.py

# bench/run.sh makes its own bench/.venv (pyspark, pylance, matplotlib; bench/requirements.txt).
# LINE picks the built line whose jar is measured (default: the default line).
LINE ?= $(DEFAULT_LINE)
bench: $(JARS_STAMP)
	LINE=$(LINE) bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .venv-* python/build python/spark_lance/jars python/*.egg-info dist \
	       connector/target target project/target .pytest_cache
