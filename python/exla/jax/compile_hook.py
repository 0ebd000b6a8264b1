"""Which JAX programs exla rewrites, and with which settings.

:mod:`exla.bridge.jax` shows exla every program JAX compiles. This module
decides what to do with it:

* a program of an :func:`exla.jit` function carries a marker in its name
  (``jit_exla_<key>_f``, or a nested function ``exla_<key>_f`` when it was
  called inside another ``jax.jit``); ``<key>`` names that function's settings.
  The settings of the top-level function win; among nested ones the smallest
  threshold does;
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
own module. Any failure in exla logs one warning on logger ``"exla"`` and JAX
compiles its own module; with ``strict`` the failure is raised instead.
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

_MARKER = re.compile(r"exla_([0-9a-f]{10})_")


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


def marker(key: str, name: str) -> str:
    """The function name that carries ``key`` into JAX's modules."""
    return f"exla_{key}_{name}"


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


def _settings_for(program: jax_bridge.Program) -> dict[str, Any] | None:
    top = _MARKER.search(program.name)
    if top and top.group(1) in _registry:
        return _registry[top.group(1)]
    nested = [_registry[m.group(1)] for name in program.function_names
              for m in [_MARKER.search(name)] if m and m.group(1) in _registry]
    if nested:
        return min(nested, key=lambda s: s.get("threshold") or float("inf"))
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


class _Hook:
    def rewrite(self, program: jax_bridge.Program) -> str | None:
        settings = _settings_for(program)
        if settings is None:
            return None
        options = None
        try:
            options = resolve(settings)
            if program.has_host_callbacks:
                # Host callbacks carry annotations that the HLO round trip
                # does not keep; they run as JAX compiled them.
                _log.info("exla: %s left unchanged: it has host callbacks", program.name)
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
