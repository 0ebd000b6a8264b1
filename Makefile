# The two commands a newcomer runs (see README.md):
#   make demo   installs exla into .venv and runs the out-of-memory demonstration
#   make test   installs exla with its test and experiment dependencies into .venv
#               and runs the tests (the C++ tests first, then pytest)
#   make cctest builds and runs only the C++ tests (tests/cc/**/*_test.cc), one
#               binary each under build/cctest/; CCTEST_FILTER='Dce.*' runs a
#               subset (gtest filter syntax)
#   make sanitize   the C++ tests and the Python IR tests (round-trip corpus,
#               parse errors, verifier) under AddressSanitizer and
#               UndefinedBehaviorSanitizer (needs install-test first)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test cctest install install-test sanitize clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(PY) -m pip install --quiet .

install-test: $(PY)
	$(PY) -m pip install --quiet ".[test,experiments]"

demo: install
	$(PY) -m exla demo

test: cctest install-test
	EXLA_REQUIRE_EXTENSION=1 $(PY) -m pytest -q tests

# C++ tests: exla's sources (without the Python bindings) and the test
# support code compiled once into objects under build/cctest/obj/ (header
# dependencies tracked by -MMD, so a rebuild recompiles only what changed),
# then one binary per tests/cc/**/*_test.cc.
CXX ?= g++
CCTEST_DIR := build/cctest
CCTEST_CXXFLAGS := -std=c++17 -O1 -Wall -Icc -I. -MMD -MP
CCTEST_CORE_SRCS := $(shell find cc -name '*.cc' -not -path 'cc/bindings/*' | sort)
CCTEST_SUPPORT_SRCS := tests/cc/test_harness.cc tests/cc/filecheck.cc tests/cc/pass_test_bench.cc
CCTEST_SRCS := $(sort $(shell find tests/cc -name '*_test.cc'))
CCTEST_BINS := $(patsubst tests/cc/%.cc,$(CCTEST_DIR)/%,$(CCTEST_SRCS))
cctest_obj = $(patsubst %.cc,$(CCTEST_DIR)/obj/%.o,$(1))
CCTEST_CORE_OBJS := $(call cctest_obj,$(CCTEST_CORE_SRCS))
CCTEST_SUPPORT_OBJS := $(call cctest_obj,$(CCTEST_SUPPORT_SRCS))
# Objects are kept between runs (make would delete them as intermediates).
.SECONDARY: $(CCTEST_CORE_OBJS) $(CCTEST_SUPPORT_OBJS) $(call cctest_obj,$(CCTEST_SRCS))

$(CCTEST_DIR)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CCTEST_CXXFLAGS) -c $< -o $@

$(CCTEST_DIR)/libexla_core.a: $(CCTEST_CORE_OBJS)
	rm -f $@
	ar rcs $@ $^

$(CCTEST_DIR)/%_test: $(CCTEST_DIR)/obj/tests/cc/%_test.o $(CCTEST_SUPPORT_OBJS) $(CCTEST_DIR)/libexla_core.a
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^

-include $(shell find $(CCTEST_DIR)/obj -name '*.d' 2>/dev/null)

# Runs every binary (a failing one does not stop the others), then fails if
# any failed. With CCTEST_FILTER, binaries without a matching test are
# skipped, and a filter that matches nothing anywhere is an error.
CCTEST_FILTER_ARG = $(if $(CCTEST_FILTER),--filter='$(CCTEST_FILTER)')
cctest: $(CCTEST_BINS)
	@failed=""; ran=0; for t in $(CCTEST_BINS); do \
	  if [ -z "$$($$t --list $(CCTEST_FILTER_ARG))" ]; then continue; fi; \
	  ran=1; echo "== $$t"; \
	  $$t $(CCTEST_FILTER_ARG) || failed="$$failed $$t"; \
	done; \
	if [ $$ran = 0 ]; then echo "no C++ test matches CCTEST_FILTER=$(CCTEST_FILTER)"; exit 1; fi; \
	if [ -n "$$failed" ]; then echo "C++ tests failed:$$failed"; exit 1; fi

sanitize: $(PY)
	PYTHON=$(PY) bash .ci/sanitize.sh

clean:
	rm -rf $(VENV) build python/exla/*.so python/*.egg-info
