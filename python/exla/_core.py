"""The one caller of exla's C++ extension, ``exla._exla``.

Every call into the C++ core goes through this module, so that its failures
reach Python in exactly two forms:

* ``ValueError``: the input is bad (malformed HLO with its line and column, an
  unknown pass name). The C++ core signals these with ``std::invalid_argument``,
  which pybind11 turns into ``ValueError``.
* :class:`exla.ExlaError`: anything else, i.e. an internal error of exla. The
  message says which function failed and what the C++ core said, never a
  C++ exception name alone, and never the module text pybind11 puts into the
  message of an argument-conversion ``TypeError``.

>>> from exla import _core
>>> "dce" in _core.available_passes() and set(_core.cleanup_passes()) <= set(_core.available_passes())
True
>>> _core.round_trip("HloModule m\\n\\nENTRY e {\\n  x = f32[2] parameter(0)\\n  ROOT y = f32[2 negate(x)\\n}")
Traceback (most recent call last):
ValueError: line 5, column 18: expected ']' to close the dimensions ...
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from exla import _fault_injection
from exla.errors import ExlaError
from exla._setting import METADATA_KEY

__all__ = ["extension", "records", "optimize", "round_trip", "verify", "module_summary", "tensor_sizes",
           "read_signature", "available_passes", "default_pipeline", "cleanup_passes",
           "predict_memory", "predict_timeline", "predict_time", "search_plans",
           "search_plans_judged"]

# An error message longer than this is cut: a C++ message that quotes a whole
# module would otherwise flood a log line.
_MAX_MESSAGE = 2000


def extension() -> Any:
    """The compiled module ``exla._exla``.

    Raises:
      ImportError: the extension is not built (with the command that builds it).
    """
    try:
        from exla import _exla  # on first use: exla imports without it, and says how to build it
    except ImportError as e:
        raise ImportError(
            "exla's C++ extension exla._exla is not built; run `pip install .` or "
            f"`python setup.py build_ext --inplace` in the exla checkout ({e})") from e
    return _exla


def records(*names: str) -> Callable[[str], Any]:
    """A module's ``__getattr__`` (PEP 562) that hands out the C++ core's
    record classes ``names`` (bound in cc/bindings/records.cc: each result
    record is declared once, in C++), loading the extension on first use so
    that ``import exla`` works without it.

    >>> __getattr__ = records("MemoryPrediction")
    >>> __getattr__("MemoryPrediction")._fields[:2]
    ('argument_bytes', 'output_bytes')
    """
    def getattr_(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module has no attribute {name!r}")
        return getattr(extension(), name)
    return getattr_


def _short(message: str) -> str:
    # pybind11's argument errors end with "Invoked with: <every argument>".
    message = message.split("\n\nInvoked with:")[0].split("Invoked with:")[0].strip()
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + " ..."
    return message


def _call(name: str, *args: Any) -> Any:
    """Calls the extension's ``name``; an argument that is a callable is called first (inside
    the same error handling: a value the binding refuses is an internal error)."""
    function: Callable[..., Any] = getattr(extension(), name)
    try:
        return function(*(a() if callable(a) else a for a in args))
    except ValueError as e:
        raise ValueError(_short(str(e))) from None
    except Exception as e:  # noqa: BLE001 - every other failure is exla's own
        detail = _short(str(e)) or type(e).__name__
        raise ExlaError(f"internal error in exla's C++ core ({name}): {detail}") from None


def _core_options(options: Any, large_sums: bool = False,
                  dimensions: dict[str, int] | None = None, tile_size: int | None = None) -> Any:
    """``options`` as the C++ core's ``exla::Options``: every setting declared ``core``,
    plus the plan search's own ``large_sums``, ``split_dimensions`` and
    ``tile_size`` (which also writes loop state in place)."""
    core = extension().Options()
    for field in dataclasses.fields(options):
        value = getattr(options, field.name)
        if field.metadata[METADATA_KEY].core and value is not None:
            setattr(core, field.name, list(value) if isinstance(value, tuple) else value)
    core.large_sums = large_sums
    core.split_dimensions = dict(dimensions or {})
    core.tile_size = tile_size or 0
    core.in_place_loop_state = bool(tile_size)
    return core


def optimize(text: str, options: "exla.options.Options", *, large_sums: bool = False,
             dimensions: dict[str, int] | None = None, tile_size: int | None = None) -> Any:
    """Runs the passes: an ``OptimizedModule`` (``text``, and ``passes``, one
    ``PassRecord`` per pass: name, changed, seconds, messages and the
    tensor-splitter's results).

    The settings the C++ core reads (:class:`exla.options.Options` fields
    declared ``core``) are copied into its ``exla::Options``; a size that is
    None is 0 there (no limit), a pass list that is None the default
    pipeline.

    The splitter's results over all passes: :func:`exla._splitter_result.of_records`.

    ``large_sums``, ``dimensions`` and ``tile_size`` are the memory-limit
    search's settings of a plan (``Options::large_sums``,
    ``Options::split_dimensions`` and ``Options::tensor_tile_size`` with
    ``Options::in_place_loop_state``, cc/passes/options.h).
    """
    if _fault_injection.failing("optimize"):
        raise ExlaError(f"internal error in exla's C++ core (optimize): "
                        f"{_fault_injection.message('optimize')}")
    return _call("optimize", text,
                 lambda: _core_options(options, large_sums, dimensions, tile_size))


def search_plans(text: str, options: "exla.options.Options", target: int, *,
                 threshold: int | None, split_size: int | None, max_plans: int) -> Any:
    """The C++ plan search (cc/search/plan_search.h): a ``PlanSearchResult``. ``options`` gives the passes and the
    settings every plan shares; each plan sets the split settings itself."""
    if _fault_injection.failing("optimize"):
        raise ExlaError(f"internal error in exla's C++ core (search_plans): "
                        f"{_fault_injection.message('optimize')}")
    return _call("search_plans", text, lambda: _core_options(options), target, threshold or 0,
                 split_size or 0, max_plans)


def search_plans_judged(text: str, judge: Callable[[Any], Any], *, floor_bytes: int,
                        target: int, threshold: int | None, split_size: int | None,
                        max_plans: int) -> Any:
    """The same C++ plan search judged by ``judge`` (a ``PlanSettings`` in, a
    ``Judgement`` out: XLA's compile), its thresholds and slice sizes only,
    above the input's ``floor_bytes``: a ``PlanSearchResult``. What ``judge``
    raises reaches the caller as it was raised (no internal error: the
    judge's failures are its own)."""
    return extension().search_plans_judged(text, judge, floor_bytes, target, threshold or 0,
                                           split_size or 0, max_plans)


def round_trip(text: str) -> str:
    """Parses and prints the module again."""
    return _call("round_trip", text)


def verify(text: str) -> None:
    """Raises ``ValueError`` (with line and column) if the module is malformed."""
    _call("verify", text)


def module_summary(text: str) -> Any:
    """A ``ModuleSummary``: instruction counts, the largest tensors (per device,
    when ``sharded``) and ``devices``."""
    return _call("module_summary", text)


def tensor_sizes(text: str) -> list:
    """A ``TensorSize`` (computation, instruction, opcode, bytes, shape) for
    every array-shaped instruction.

    ``bytes`` is what one device holds, for a sharded module.
    """
    return _call("tensor_sizes", text)


def read_signature(text: str) -> Any:
    """The entry signature as the C++ parser reads it, a ``RawSignature`` (see
    :mod:`exla._hlo_signature`)."""
    return _call("read_signature", text)


def predict_memory(text: str) -> Any:
    """The memory model's figures for a module (see :mod:`exla.predict`)."""
    return _call("predict_memory", text)


def predict_timeline(text: str, max_named: int) -> Any:
    """The memory model's live bytes per schedule step (see :mod:`exla.predict`)."""
    return _call("predict_timeline", text, max_named)


def predict_time(text: str, constants: dict[str, float] | None = None) -> Any:
    """The cost model's figures for a module (see :mod:`exla.predict`), with
    the calibrated constants, or with some of them replaced by ``constants``
    (by field name: experiments try other values with it).

    Raises:
      ValueError: a name in ``constants`` is not one of the cost model's.
    """
    if not constants:
        return _call("predict_time", text)
    chosen = extension().CostConstants()
    for name, value in constants.items():
        if name.startswith("_") or not hasattr(chosen, name):
            raise ValueError(f"unknown cost model constant {name!r}")
        setattr(chosen, name, float(value))
    return _call("predict_time", text, chosen)


@functools.lru_cache(maxsize=None)
def _names(which: str) -> tuple[str, ...]:
    return tuple(_call(which))


def available_passes() -> list[str]:
    """Every pass name the C++ core knows."""
    return list(_names("available_passes"))


def default_pipeline() -> list[str]:
    """The passes run by default, in order."""
    return list(_names("default_pipeline"))


def cleanup_passes() -> list[str]:
    """The clean-up passes: a module that only they changed counts as unchanged."""
    return list(_names("cleanup_passes"))
