# The two commands a newcomer runs (see README.md):
#   make demo   installs exla into .venv and runs the out-of-memory demonstration
#   make test   installs exla with its test and experiment dependencies into .venv
#               (the oldest jax, numpy and Python exla supports, with TensorFlow:
#               .ci/oldest.txt) and runs the tests (the C++ tests first, then pytest)
# CI (.ci/run) also runs:
#   make test-newest   the JAX, bridge, corpus and fallback tests in .venv-newest:
#               Python 3.12, the newest jax/jaxlib and numpy, no TensorFlow
#               (.ci/newest.txt)
#   make test-tensorflow-oldest   the TensorFlow frontend's tests in
#               .venv-tf-oldest: the oldest TensorFlow with the newest jax and
#               numpy 2 (.ci/tensorflow-oldest.txt)
#   make wheel  manylinux wheels for Python 3.11 and 3.12 in dist/ (auditwheel)
#   make cctest builds and runs only the C++ tests (tests/cc/**/*_test.cc), one
#               binary each under build/cctest/; CCTEST_FILTER='Dce.*' runs a
#               subset (gtest filter syntax)
#   make sanitize   the C++ tests and the Python IR tests (round-trip corpus,
#               parse errors, verifier) under AddressSanitizer and
#               UndefinedBehaviorSanitizer (needs install-test first)
PYTHON ?= python3
PYTHON_NEWEST ?= $(shell .ci/python.sh 3.12)
VENV ?= .venv
PY := $(VENV)/bin/python
NEWEST := .venv-newest/bin/python
TF_OLDEST := .venv-tf-oldest/bin/python

.PHONY: demo test test-newest test-tensorflow-oldest wheel cctest install install-test sanitize clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(PY) -m pip install --quiet ".[jax,tensorflow]"

install-test: $(PY)
	$(PY) -m pip install --quiet -c .ci/oldest.txt ".[jax,tensorflow,gpflow,test,tensorflow-test,experiments]"

demo: install
	$(PY) -m exla demo

test: cctest install-test
	EXLA_REQUIRE_EXTENSION=1 $(PY) -m pytest -q tests

# The second environment: what a JAX user on current releases has. Only the
# tests of the JAX path, the bridge, the HLO corpus and the fallback run here
# (the memory and cost models are calibrated on the oldest jaxlib's XLA CPU).
NEWEST_TESTS := tests/python/jax tests/python/bridge tests/ir \
  tests/python/test_cli.py tests/python/test_imports.py tests/python/test_options.py \
  tests/python/test_settings.py tests/python/test_hlo_signature.py tests/python/test_topk_prefilter.py \
  tests/python/memory_limit/test_limit_plan.py tests/python/memory_limit/test_search.py \
  tests/test_size_syntax.py tests/experiments/workloads/test_gpu_check.py \
  tests/experiments/test_launcher.py

$(NEWEST):
	$(PYTHON_NEWEST) -m venv .venv-newest
	$(NEWEST) -m pip install --quiet --upgrade pip

test-newest: $(NEWEST)
	$(NEWEST) -m pip install --quiet -c .ci/newest.txt ".[jax,test]"
	$(NEWEST) -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('tensorflow') is not None)" \
	  || { echo "TensorFlow is installed in .venv-newest: the JAX path must not need it"; exit 1; }
	EXLA_REQUIRE_EXTENSION=1 EXLA_TEST_ENV=jax $(NEWEST) -m pytest -q $(NEWEST_TESTS)

# The oldest TensorFlow, with the newest jax and numpy 2: the TensorFlow frontend.
TF_OLDEST_TESTS := tests/python/tensorflow/test_function.py tests/python/tensorflow/test_fallback.py \
  tests/python/bridge/test_tensorflow.py tests/python/bridge/test_tensorflow_call.py tests/python/bridge/test_xla.py

$(TF_OLDEST):
	$(PYTHON_NEWEST) -m venv .venv-tf-oldest
	$(TF_OLDEST) -m pip install --quiet --upgrade pip

test-tensorflow-oldest: $(TF_OLDEST)
	$(TF_OLDEST) -m pip install --quiet -c .ci/tensorflow-oldest.txt ".[tensorflow,test]" "tf_keras"
	EXLA_REQUIRE_EXTENSION=1 EXLA_TEST_ENV=tensorflow-oldest $(TF_OLDEST) -m pytest -q $(TF_OLDEST_TESTS)

# manylinux wheels for Python 3.11 and 3.12 (see .ci/wheel.sh for the tag).
wheel:
	bash .ci/wheel.sh $(PYTHON) $(PYTHON_NEWEST)

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
	rm -rf $(VENV) .venv-newest .venv-tf-oldest build dist python/exla/*.so python/*.egg-info
