"""Which JAX programs exla rewrites, and with which settings.

:mod:`exla.bridge.jax` shows exla every program JAX compiles. This module
decides what to do with it:

* a program of an :func:`exla.jit` function carries a marker in its name
  (``jit_exla_<key>_f``, or a nested function ``exla_<key>_f`` when it was
  called inside another ``jax.jit``); ``<key>`` names that function's settings
  (with an ``s`` after it when the function is strict). The settings of the
  top-level function win; among nested ones the smallest threshold does. A
  marked program whose settings this process does not hold (a key never
  registered here) is a failure of exla's: a warning, an error under strict;
* any other program is rewritten with the settings of the environment
  (``XLA_FLAGS``/``EXLA_FLAGS``) when the zero-code path is on
  (:func:`enable_environment`), and compiled unchanged otherwise.

A program JAX compiles for several devices (``jax.jit`` of sharded arrays,
``shard_map``) is rewritten before XLA's SPMD partitioner runs, for what one
device will hold: sizes and limits are per device and no loop runs over a
dimension cut between devices (see :func:`exla.optimize_hlo`); XLA then
partitions exla's loops with the rest. Programs with host callbacks are
compiled as JAX made them.

A program that no pass changes (the clean-ups aside) is compiled from JAX's
own module; one left above its threshold or memory limit is an error under
``strict`` (:func:`exla.optimize_hlo`), as is one with host callbacks, which
exla leaves as it is. Any failure in exla logs one warning on logger
``"exla"`` and JAX compiles its own module; with ``strict`` the failure is
raised instead, as :func:`exla.function` does.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from typing import Any, Mapping

import jax

from exla import _fault_injection
from exla.bridge import jax as jax_bridge
from exla.bridge import xla as xla_bridge
from exla.errors import ExlaError, MemoryLimitError
from exla.memory_limit import planner, runtime_memory
from exla.optimize import optimize_hlo
from exla.options import Options, resolve_options

__all__ = ["register", "enable_environment", "ensure_installed", "rewritten_programs"]

_log = logging.getLogger("exla")

_MARKER = re.compile(r"exla_([0-9a-f]{10})(s?)_")


_lock = threading.Lock()
_registry: dict[str, dict[str, Any]] = {}  # key -> explicit settings of an exla.jit
_environment = False  # the zero-code path: rewrite every program
_warned: set[str] = set()
_compiled: list[str] = []  # names of the programs JAX compiled from exla's rewrite


def rewritten_programs() -> list[str]:
    """The names of the JAX programs whose executable is exla's rewrite, in compile order.

    A name is added only once XLA has compiled the rewritten module, so that
    JAX runs it: a program exla fell back on is never listed.
    """
    with _lock:
        return list(_compiled)


def register(overrides: Mapping[str, Any]) -> str:
    """Records the explicit settings of an :func:`exla.jit`; returns their key.

    The key depends only on the settings, so it is the same in every process
    (JAX's persistent compilation cache keys on the module, name included).
    """
    items = tuple(sorted((k, v) for k, v in overrides.items() if v is not None))
    key = hashlib.sha1(repr(items).encode()).hexdigest()[:10]
    with _lock:
        _registry[key] = dict(items)
    ensure_installed()
    return key


def marker(key: str, name: str, *, strict: bool = False) -> str:
    """The function name that carries ``key`` into JAX's modules.

    A strict function's marks itself so (``s`` after the key): a program
    whose settings are not found still fails under ``strict``.
    """
    return f"exla_{key}{'s' if strict else ''}_{name}"


def enable_environment() -> None:
    """The zero-code path: rewrite every program JAX compiles with the environment's settings.

    JAX's persistent compilation cache is turned off: it is looked up before
    the compile step exla hooks, under a key that does not include exla's
    flags, so it could hand back a program compiled without exla (or with
    other flags) and run out of memory after all.
    """
    global _environment
    _environment = True
    ensure_installed()
    if jax.config.jax_enable_compilation_cache:
        jax.config.update("jax_enable_compilation_cache", False)
        _log.info("exla: JAX's persistent compilation cache is off while exla rewrites programs")


def ensure_installed() -> None:
    """Puts the hook in place (idempotent).

    Raises:
      ImportError: jax or jaxlib is missing or not a supported version
        (:class:`exla.bridge.versions.UnsupportedVersionError`, naming it).
    """
    # Checked on every call (both cached): after a version check is reset, or
    # with the hook already in place, an unsupported release still fails here.
    xla_bridge._xla()
    jax_bridge.check_jax()
    if jax_bridge.hook_installed() is not _HOOK:
        jax_bridge.install_compile_hook(_HOOK)


def resolve(overrides: Mapping[str, Any]) -> Options:
    """The settings in effect: ``overrides`` (an :func:`exla.jit`'s keywords), then the environment."""
    return resolve_options(**{k: v for k, v in overrides.items() if v is not None})


class _SettingsNotFound(LookupError):
    """A program marked as an :func:`exla.jit` function's whose settings this process does not hold."""

    def __init__(self, keys: list[str], strict: bool) -> None:
        super().__init__(f"the settings of exla.jit key(s) {', '.join(keys)} are not registered "
                         f"in this process (was the program traced in another one?)")
        self.strict = strict


def _settings_for(program: jax_bridge.Program) -> dict[str, Any] | None:
    """The settings to rewrite ``program`` with; None: not exla's to rewrite.

    Raises:
      _SettingsNotFound: the program is marked, but none of its keys is registered.
    """
    top = _MARKER.search(program.name)
    if top and top.group(1) in _registry:
        return _registry[top.group(1)]
    marks = [m for name in program.function_names for m in [_MARKER.search(name)] if m]
    nested = [_registry[m.group(1)] for m in marks if m.group(1) in _registry]
    if nested:
        return min(nested, key=lambda s: s.get("threshold") or float("inf"))
    if top:
        marks.insert(0, top)
    if marks:
        raise _SettingsNotFound(sorted({m.group(1) for m in marks}),
                               strict=any(m.group(2) for m in marks))
    return {} if _environment else None


def _fail(program: jax_bridge.Program, options: Options, error: Exception) -> None:
    if isinstance(error, MemoryLimitError):
        raise error  # the user's limit cannot be met by any program: never a fallback
    if options.strict:
        raise ExlaError(f"exla failed on JAX program {program.name!r}: "
                        f"{type(error).__name__}: {error}") from error
    reason = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    with _lock:
        if reason in _warned:
            return
        _warned.add(reason)
    _log.warning("exla failed on JAX program %r (%s); running without exla", program.name, reason)


def _options_without_settings(strict: bool) -> Options:
    """The environment's settings (strict if the program's marker says so), or the defaults."""
    try:
        return resolve({"strict": strict or None})
    except Exception:  # noqa: BLE001 - a bad flag is reported where the flags are used
        return Options(strict=strict)


def _leave_unchanged(program: jax_bridge.Program, options: Options, reason: str) -> None:
    """A program exla does not handle runs as JAX made it: a log line, an error under strict."""
    if options.strict:
        raise ExlaError(f"exla cannot rewrite JAX program {program.name!r}: {reason}")
    _log.info("exla: %s left unchanged: %s", program.name, reason)


class _Hook:
    def rewrite(self, program: jax_bridge.Program) -> str | None:
        try:
            settings = _settings_for(program)
        except _SettingsNotFound as missing:
            _fail(program, _options_without_settings(missing.strict), missing)
            return None
        if settings is None:
            return None
        options = None
        try:
            options = resolve(settings)
            if program.has_host_callbacks:
                # Host callbacks carry annotations that the HLO round trip
                # does not keep; they run as JAX compiled them.
                _leave_unchanged(program, options, "it has host callbacks")
                return None
            text = program.hlo_text()
            with planner.planning_on(_planner_for(program)):
                optimised, report = optimize_hlo(
                    text, **options.replace(dump_dir=_dump_dir(options, program)).keywords())
            runtime_memory.attach(report, "jax")
            if not report.rewrote_program or _fault_injection.noop():
                return None
            _log.info("exla rewrote JAX program %s: largest tensor %d -> %d bytes",
                      program.name, report.largest_tensor_bytes_before,
                      report.largest_tensor_bytes_after)
            program.exla_options = options
            return optimised
        except Exception as error:  # noqa: BLE001 - exla must never break the program
            _fail(program, options or Options(strict=bool(settings.get("strict"))), error)
            return None

    def compile_failed(self, program: jax_bridge.Program, error: Exception) -> None:
        _fail(program, getattr(program, "exla_options", Options()), error)

    def compiled(self, program: jax_bridge.Program) -> None:
        with _lock:
            _compiled.append(program.name)


def _planner_for(program: jax_bridge.Program) -> planner.Planner:
    """Where a memory limit's plans get XLA's figures: the backend that will run
    the program. On the CPU that is jaxlib's own client (the same XLA, with
    LLVM's optimisations left out: they come after buffer assignment); on any
    other backend, the program's own compile (never the CPU's)."""
    if program.platform == "cpu":
        return planner.cpu()
    key = f"{program.platform}:{program.num_devices}"
    return planner.Planner(program.platform, key, program.planned_memory)


def _dump_dir(options: Options, program: jax_bridge.Program) -> str | None:
    if not options.dump_dir:
        return None
    return os.path.join(options.dump_dir, re.sub(r"[^\w.-]", "_", program.name))


_HOOK = _Hook()
