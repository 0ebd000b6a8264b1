"""Failures injected on purpose, to test that exla falls back (private; tests only).

exla promises that a failure of its own never breaks a working program: the
original program runs instead, with one warning (an error under ``strict``).
That promise is only as good as its tests, and the tests need exla to fail
at each stage of its path, in every frontend, including in a subprocess
started with ``XLA_FLAGS`` (where a test cannot monkeypatch anything). So the
environment variable ``EXLA_INJECT_FAILURE`` names stages, comma-separated,
at which exla then fails:

* ``optimize``: the C++ core's ``optimize`` raises, as an internal error of
  the core does (:class:`exla.ExlaError`);
* ``stablehlo``: the conversion of HLO text to StableHLO raises;
* ``compile``: the rewritten module gets a side-effecting custom call that no
  XLA backend implements, so XLA's compile of it fails. Only a module a
  pass rewrote is touched: an unchanged one never reaches XLA from exla.

One value is no failure: ``noop`` makes every frontend run the original
program as if no pass had changed it, silently (no warning, no error, strict
or not), while exla's reports still say what it rewrote. It is what a silent
fallback would look like to a test: a test of a rewrite that still passes in
this mode does not check that the rewrite ran
(``python -m experiments noop_run`` lists them).

The variable is read at each use, so one process can change it between
calls. It is not a setting: nothing but exla's tests should set it.

>>> import os
>>> os.environ[VARIABLE] = "compile"
>>> failing("compile"), failing("optimize"), noop()
(True, False, False)
>>> print(uncompilable("HloModule m\\n\\nENTRY e {\\n  ROOT x = f32[] parameter(0)\\n}\\n"))
HloModule m
<BLANKLINE>
ENTRY e {
  exla_injected_failure = () custom-call(), custom_call_target="exla_injected_failure", custom_call_has_side_effect=true
  ROOT x = f32[] parameter(0)
}
<BLANKLINE>
>>> del os.environ[VARIABLE]
"""

from __future__ import annotations

import os

__all__ = ["VARIABLE", "STAGES", "NOOP", "failing", "noop", "uncompilable"]

VARIABLE = "EXLA_INJECT_FAILURE"
STAGES = ("optimize", "stablehlo", "compile")
NOOP = "noop"

_CUSTOM_CALL = ('  exla_injected_failure = () custom-call(), custom_call_target="exla_injected_failure", '
                'custom_call_has_side_effect=true\n')


def failing(stage: str) -> bool:
    """Whether ``EXLA_INJECT_FAILURE`` names ``stage``."""
    value = os.environ.get(VARIABLE)
    return bool(value) and stage in (s.strip() for s in value.split(","))


def noop() -> bool:
    """Whether ``EXLA_INJECT_FAILURE`` names ``noop``: the frontends run the original, silently."""
    return failing(NOOP)


def message(stage: str) -> str:
    """The text of an injected failure."""
    return f"failure injected at stage {stage!r} ({VARIABLE})"


def uncompilable(text: str) -> str:
    """``text`` with a custom call no XLA backend implements, before the ENTRY's ROOT."""
    entry = text.find("\nENTRY ")
    root = text.find("\n  ROOT ", entry)
    if entry < 0 or root < 0:
        raise ValueError("no ENTRY computation with a ROOT line to inject a failure into")
    return text[:root + 1] + _CUSTOM_CALL + text[root + 1:]
