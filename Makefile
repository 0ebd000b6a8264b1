# The two commands a newcomer runs (see README.md):
#   make demo   installs exla into .venv and runs the out-of-memory demonstration
#   make test   installs exla with its test and experiment dependencies into .venv
#               and runs the tests
#   make sanitize   the C++ tests and the Python IR tests (round-trip corpus,
#               parse errors, verifier) under AddressSanitizer and
#               UndefinedBehaviorSanitizer (needs install-test first)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test install install-test sanitize clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(PY) -m pip install --quiet .

install-test: $(PY)
	$(PY) -m pip install --quiet ".[test,experiments]"

demo: install
	$(PY) -m exla demo

test: install-test
	EXLA_REQUIRE_EXTENSION=1 $(PY) -m pytest -q tests

sanitize: $(PY)
	PYTHON=$(PY) bash .ci/sanitize.sh

clean:
	rm -rf $(VENV) build python/exla/*.so python/*.egg-info
