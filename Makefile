# The two commands a newcomer runs (see README.md):
#   make demo   installs exla into .venv and runs the out-of-memory demonstration
#   make test   installs exla with its test dependencies into .venv and runs the tests
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(PY) -m pip install --quiet ".[test]"

demo: install
	$(PY) -m exla demo

test: install
	EXLA_REQUIRE_EXTENSION=1 $(PY) -m pytest -q tests

clean:
	rm -rf $(VENV) build python/exla/*.so python/*.egg-info
