"""``optimize_hlo``: exla's passes on one HLO module, with a report."""

from __future__ import annotations

import logging
import os
import time
from typing import Sequence

from exla import _core, _fault_injection
from exla.options import env_bool, format_size, keyword_bool, parse_size, resolve_passes
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
    from exla.bridge import xla as bridge

    return bridge.proto_to_text(data)


def _planned_temp(text: str, which: str) -> int:
    from exla.bridge import xla as bridge

    try:
        return bridge.planned_memory(text).temp_bytes
    except (ValueError, RuntimeError) as e:
        raise type(e)(f"planned memory of the {which} module: {e}") from e


def _messages(records: list) -> list[tuple[str, str]]:
    # The extension may append extra fields (messages) after the first three.
    return [(str(r[0]), str(m)) for r in records if len(r) > 3 for m in r[3]]


def _over_threshold_message(threshold: int, unsplit: list[str]) -> str:
    from exla import _memory_limit

    return (f"exla cannot meet the threshold {format_size(threshold)}: "
            f"{len(unsplit)} instruction(s) stay above it:" + _memory_limit.format_listing(unsplit))


def _fail_or_warn(message: str, strict: bool) -> None:
    if strict:
        from exla.errors import ExlaError

        raise ExlaError(message)
    _log.warning("%s", message)


def optimize_hlo(
    hlo: str | bytes,
    *,
    threshold: str | int | None = None,
    split_size: str | int | None = None,
    passes: Sequence[str] | None = None,
    disabled_passes: Sequence[str] = (),
    dump_dir: str | os.PathLike[str] | None = None,
    planned_memory: bool = False,
    memory_limit: str | int | None = None,
    strict: bool | None = None,
    fast_math: bool = False,
) -> tuple[str, Report]:
    """Runs exla's passes on an HLO module.

    Args:
      hlo: HLO text, or a serialized ``HloModuleProto`` (bytes), e.g. from
        ``f.experimental_get_compiler_ir(*args)(stage='hlo_serialized')``.
      threshold: no tensor larger than this may remain outside a loop, e.g.
        ``"100MB"``, ``"1GiB"`` or a number of bytes (see
        :func:`exla.parse_size`). None: no limit, so nothing is split.
      split_size: size of the slices the splitter's loops work on; None lets
        the splitter choose.
      passes: pass names to run, in order; None runs the default pipeline
        (:func:`default_pipeline`).
      disabled_passes: pass names not to run (names that are not exla's, such
        as XLA's from ``--xla_disable_hlo_passes``, are ignored).
      dump_dir: if given, the module is written there before the first pass
        and after every pass.
      planned_memory: also compute XLA's planned scratch memory before and
        after (compiles both modules for the CPU with jaxlib; slower).

    A module sharded for XLA's SPMD partitioner (``sharding=`` annotations,
    as JAX hands a sharded ``jax.jit`` to XLA) is rewritten for what one
    device holds: ``threshold``, ``split_size`` and ``memory_limit`` apply
    per device, the planned memory is that of one device's partitioned
    program, and no loop runs over a dimension that is cut between devices
    (see the README, "More than one device").
      memory_limit: XLA's planned peak of the rewritten program (temporaries,
        arguments and outputs, from its CPU buffer assignment) may not exceed
        this size. exla searches thresholds and split sizes itself, checking
        each candidate with XLA (see ``report.limit_plan``). With
        ``threshold`` or ``split_size`` also given, the threshold still
        bounds every tensor (the search only goes below it) and the split
        size is kept; the limit bounds the program.
      strict: raise :class:`exla.ExlaError` instead of warning when the limit
        or the threshold cannot be met; None: ``EXLA_STRICT``.
      fast_math: allow rewrites that change results beyond the program's own
        rounding: the squared-distance expansion ``|x|^2 + |y|^2 - 2 x.y``
        (a matrix multiply instead of a loop over differences), whose relative
        error is about ``eps |x|^2 / |x - y|^2`` and so large for close points.
        Off, results stay within the original program's rounding.

    Returns:
      ``(text, report)``: the optimised HLO text and a :class:`Report`. When no
      pass changes the module, ``text`` is the input text unchanged.

    Raises:
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
    threshold_bytes = 0 if threshold is None else parse_size(threshold, flag="threshold")
    split_bytes = 0 if split_size is None else parse_size(split_size, flag="split_size")
    limit_bytes = None if memory_limit is None else parse_size(memory_limit, flag="memory_limit")
    strict = env_bool("EXLA_STRICT") if strict is None else keyword_bool(strict, name="strict")
    fast_math = keyword_bool(fast_math, name="fast_math")
    planned_memory = keyword_bool(planned_memory, name="planned_memory")
    pass_list = resolve_passes(passes, disabled_passes)
    dump = ""
    if dump_dir is not None:
        dump = os.fspath(dump_dir)
        os.makedirs(dump, exist_ok=True)

    before = _core.module_summary(text)  # also rejects malformed text early

    def run(threshold_bytes: int, split_bytes: int, large_sums: bool = False) -> tuple[str, list]:
        if pass_list is not None and not pass_list:
            # Every pass disabled: the extension refuses an empty list, and the
            # honest result is the module as it was.
            return _core.round_trip(text), []
        return _core.optimize(text, pass_list, threshold_bytes, split_bytes, dump, fast_math,
                              large_sums)

    from exla import _memory_limit

    plan = None
    if limit_bytes is None:
        optimised, records = run(threshold_bytes, split_bytes)
    else:
        optimised, records, plan = _memory_limit.search(
            text, limit_bytes, lambda t, s, big: run(t or 0, s or 0, big), _messages,
            threshold=threshold_bytes or None, split_size=split_bytes or None)
    after = _core.module_summary(optimised)
    seconds = time.perf_counter() - start
    if plan is not None:
        # exla's own time: XLA's compilations during the search are reported apart.
        seconds -= plan.xla_seconds

    report = Report(
        passes=[PassRecord(str(r[0]), bool(r[1]), float(r[2])) for r in records],
        instructions_before=int(before["instructions"]),
        instructions_after=int(after["instructions"]),
        largest_tensor_bytes_before=int(before["largest_tensor_bytes"]),
        largest_tensor_bytes_after=int(after["largest_tensor_bytes"]),
        largest_tensor_before=str(before["largest_tensor"]),
        largest_tensor_after=str(after["largest_tensor"]),
        seconds=seconds,
        threshold=threshold_bytes or None,
        messages=_messages(records),
        memory_limit=limit_bytes,
        limit_plan=plan,
        devices=int(before["devices"]) if before.get("sharded") else 1,
    )
    if plan is not None:
        report.threshold = plan.chosen.threshold if plan.chosen else report.threshold
        report.planned_peak_bytes = plan.peak_bytes
        if not plan.fits:
            _fail_or_warn(_memory_limit.over_limit_message(plan), strict)
    if threshold_bytes and "tensor-splitter" in (p.name for p in report.passes):
        # Only a pipeline with the splitter promises the threshold, and only
        # for the tensors the program creates (it reports those it left). A
        # threshold given with a limit still bounds every tensor, even when
        # the plan fits the limit.
        unsplit = _memory_limit.unsplit_instructions(report.messages, optimised,
                                                     above=threshold_bytes)
        if unsplit:
            _fail_or_warn(_over_threshold_message(threshold_bytes, unsplit), strict)
    if report.rewrote_program and _fault_injection.failing("compile"):
        optimised = _fault_injection.uncompilable(optimised)
    if planned_memory:
        report.planned_temp_bytes_before = _planned_temp(text, "input")
        report.planned_temp_bytes_after = _planned_temp(optimised, "optimised")
    _log.debug("%s", report)
    # Unchanged: hand back the caller's own text, so that a no-op costs nothing
    # downstream and cannot differ from the input even in formatting.
    return (optimised if report.changed else text), report
