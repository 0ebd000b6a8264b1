"""``optimize_hlo``: exla's passes on one HLO module, with a report."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from exla import _core, _fault_injection
from exla._entry_settings import takes_settings
from exla._splitter_result import of_records
from exla.bridge import xla as bridge
from exla.errors import ExlaError
from exla.memory_limit import messages as limit_messages
from exla.memory_limit import model_plans, planner
from exla.memory_limit import search as limit_search
from exla.options import Options, format_size, keyword_bool, resolve_keywords, resolve_passes
from exla.report import PassRecord, Report

__all__ = ["optimize_hlo", "available_passes", "default_pipeline", "as_hlo_text"]

_log = logging.getLogger("exla")


def available_passes() -> list[str]:
    """Every pass name that ``optimize_hlo(passes=...)`` accepts.

    >>> "tensor-splitter" in available_passes()
    True
    """
    return _core.available_passes()


def default_pipeline() -> list[str]:
    """The passes ``optimize_hlo`` runs by default, in order.

    >>> default_pipeline()[-1]
    'dce'
    """
    return _core.default_pipeline()


def _looks_like_text(data: bytes) -> bool:
    # A serialized HloModuleProto starts with a protobuf field tag, never with
    # the word "HloModule"; text may have leading blank lines or comments.
    head = data.lstrip()[:64]
    return head.startswith(b"HloModule") or head.startswith(b"//")


def as_hlo_text(hlo: str | bytes) -> str:
    """HLO text from text or a serialized ``HloModuleProto``.

    Bytes holding UTF-8 text that starts with ``HloModule`` are taken as text;
    other bytes are parsed as an ``HloModuleProto`` (through jaxlib) and printed.

    Raises:
      ValueError: bytes that are neither.
    """
    if isinstance(hlo, str):
        return hlo
    if not isinstance(hlo, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected HLO text (str) or a serialized HloModuleProto (bytes), "
                        f"got {type(hlo).__name__}")
    data = bytes(hlo)
    if _looks_like_text(data):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"HLO text is not valid UTF-8: {e}") from None
    return bridge.proto_to_text(data)


def _planned_temp(text: str, which: str) -> int:
    try:
        return planner.current().memory(text).temp_bytes
    except (ValueError, RuntimeError) as e:
        raise type(e)(f"planned memory of the {which} module: {e}") from e


def _messages(records: list) -> list[tuple[str, str]]:
    return [(r.name, m) for r in records for m in r.messages]


def _over_threshold_message(threshold: int, unsplit: list[str]) -> str:
    return (f"exla cannot meet the threshold {format_size(threshold)}: "
            f"{len(unsplit)} instruction(s) stay above it:" + limit_messages.format_listing(unsplit))


def _fail_or_warn(message: str, strict: bool) -> None:
    if strict:
        raise ExlaError(message)
    _log.warning("%s", message)


@takes_settings()
def optimize_hlo(hlo: str | bytes, *, planned_memory: bool = False,
                 **settings: Any) -> tuple[str, Report]:
    """Runs exla's passes on an HLO module.

    Args:
      hlo: HLO text, or a serialized ``HloModuleProto`` (bytes), e.g. from
        ``f.experimental_get_compiler_ir(*args)(stage='hlo_serialized')``.
      planned_memory: also compute XLA's planned scratch memory before and
        after (compiles both modules for the CPU with jaxlib; slower).
      {SETTINGS}

    The settings are those of :class:`exla.options.Options`. ``optimize_hlo``
    reads no flags (its caller hands it the module's settings); a setting
    left None falls back to its environment variable (``EXLA_STRICT``,
    ``EXLA_DUMP_TO``), then to its default.

    A module sharded for XLA's SPMD partitioner (``sharding=`` annotations,
    as JAX hands a sharded ``jax.jit`` to XLA) is rewritten for what one
    device holds: ``threshold``, ``split_size`` and ``memory_limit`` apply
    per device, the planned memory is that of one device's partitioned
    program, and no loop runs over a dimension that is cut between devices
    (see python/README.md, "More than one device"). With ``memory_limit``, exla
    checks each candidate with XLA (see ``report.limit_plan``).

    Returns:
      ``(text, report)``: the optimised HLO text and a :class:`Report`. When no
      pass changes the module, ``text`` is the input text unchanged.

    Raises:
      TypeError: a keyword that is not a setting.
      ValueError: malformed HLO (the message gives line and column), an unknown
        pass name, a bad size, or a boolean keyword that is not True or False.
      exla.MemoryLimitError: a memory limit below the program's own arguments
        and outputs (a ``ValueError``; raised on every path, strict or not).
      ImportError: the C++ extension is not built.
      exla.ExlaError: an internal error of exla's C++ core; with ``strict``, a
        limit or threshold that cannot be met.

    Example: a kernel matrix-vector product whose 1000x1000 kernel (4 MB)
    becomes a loop over row blocks under a 1 MB limit.

    >>> import exla
    >>> hlo = '''
    ... HloModule kmv
    ... ENTRY kmv {
    ...   x = f32[1000,8] parameter(0)
    ...   v = f32[1000,1] parameter(1)
    ...   k = f32[1000,1000] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
    ...   e = f32[1000,1000] exponential(k)
    ...   ROOT kv = f32[1000,1] dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    ... }'''
    >>> text, report = exla.optimize_hlo(hlo.strip(), threshold="1MB")
    >>> report.largest_tensor_bytes_before, report.largest_tensor_bytes_after <= 1_000_000
    (4000000, True)
    >>> "tensor-splitter" in report.changed_passes, " while(" in text
    (True, True)
    """
    start = time.perf_counter()
    text = as_hlo_text(hlo)
    options = resolve_keywords(**settings)
    planned_memory = keyword_bool(planned_memory, name="planned_memory")
    if options.dump_dir is not None:
        os.makedirs(options.dump_dir, exist_ok=True)
    before = _core.module_summary(text)  # also rejects malformed text early
    optimised, records, plan = _run(text, options, sharded=before.sharded)
    after = _core.module_summary(optimised)
    # exla's own time: XLA's compilations during a limit search are reported apart.
    seconds = time.perf_counter() - start - (plan.xla_seconds if plan is not None else 0.0)
    report = _report(before, after, records, options, plan, seconds)
    _check_promises(report, records, optimised, options)
    if report.rewrote_program and _fault_injection.failing("compile"):
        optimised = _fault_injection.uncompilable(optimised)
    if planned_memory:
        report.planned_temp_bytes_before = _planned_temp(text, "input")
        report.planned_temp_bytes_after = _planned_temp(optimised, "optimised")
    _log.debug("%s", report)
    # Unchanged: hand back the caller's own text, so that a no-op costs nothing
    # downstream and cannot differ from the input even in formatting.
    return (optimised if report.changed else text), report


def _run(text: str, options: Options, *, sharded: bool = False) -> tuple[str, list, Any]:
    """The pipeline once, or the memory-limit search over it: ``(text, records, plan)``
    (``records``: the C++ core's ``PassRecord`` records).

    The memory model predicts a module on one device; a sharded module's
    plans are measured with XLA alone."""
    pass_list = resolve_passes(options.passes, options.disabled_passes)

    every_pass_disabled = pass_list is not None and not pass_list

    def run(threshold: int | None, split_size: int | None, large_sums: bool = False,
            dimensions: dict[str, int] | None = None, tile_size: int | None = None) -> Any:
        if every_pass_disabled:
            # The extension refuses an empty list, and the honest result is
            # the module as it was.
            return _core.extension().OptimizedModule(_core.round_trip(text), ())
        candidate = options.replace(threshold=threshold, split_size=split_size, passes=pass_list)
        return _core.optimize(text, candidate, large_sums=large_sums, dimensions=dimensions,
                              tile_size=tile_size)

    def models(target: int) -> model_plans.PlanSearchResult:
        return model_plans.search(text, options.replace(passes=pass_list), target,
                                   threshold=options.threshold or None,
                                   split_size=options.split_size or None)

    if options.memory_limit is None:
        optimized = run(options.threshold, options.split_size)
        return optimized.text, list(optimized.passes), None
    return limit_search.search(text, options.memory_limit, run,
                                threshold=options.threshold or None,
                                split_size=options.split_size or None,
                                models=None if every_pass_disabled or sharded else models,
                                refusals=lambda threshold: run(threshold, None))


def _report(before: Any, after: Any, records: list, options: Options, plan: Any,
            seconds: float) -> Report:
    """``before`` and ``after``: the C++ core's ``ModuleSummary`` of each module."""
    splitter = of_records(records)
    report = Report(
        passes=[PassRecord(r.name, r.changed, r.seconds) for r in records],
        instructions_before=before.instructions,
        instructions_after=after.instructions,
        largest_tensor_bytes_before=before.largest_tensor_bytes,
        largest_tensor_bytes_after=after.largest_tensor_bytes,
        largest_tensor_before=before.largest_tensor,
        largest_tensor_after=after.largest_tensor,
        seconds=seconds,
        threshold=options.threshold or None,
        messages=_messages(records),
        memory_limit=options.memory_limit,
        limit_plan=plan,
        devices=before.devices if before.sharded else 1,
        split_loops=splitter.loops,
        unsplit=splitter.unsplit,
    )
    if plan is not None:
        report.threshold = plan.chosen.threshold if plan.chosen else report.threshold
        report.planned_peak_bytes = plan.peak_bytes
    return report


def _check_promises(report: Report, records: list, optimised: str, options: Options) -> None:
    """Warns, or with ``strict`` raises, when the limit or the threshold is not met."""
    plan = report.limit_plan
    if plan is not None and not plan.fits:
        _fail_or_warn(limit_messages.over_limit_message(plan), options.strict)
    threshold = options.threshold
    if threshold and "tensor-splitter" in (p.name for p in report.passes):
        # Only a pipeline with the splitter promises the threshold, and only
        # for the tensors the program creates (it reports those it left). A
        # threshold given with a limit still bounds every tensor, even when
        # the plan fits the limit.
        unsplit = limit_messages.unsplit_instructions(of_records(records), optimised,
                                                     above=threshold)
        if unsplit:
            _fail_or_warn(_over_threshold_message(threshold, unsplit), options.strict)
