"""What an optimisation did: passes run, tensor sizes and memory before and after."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, NamedTuple

from exla import _core
from exla.options import format_size

if TYPE_CHECKING:
    from exla._exla import SplitLoop, UnsplitTensor

__all__ = ["PassRecord", "Report"]


class PassRecord(NamedTuple):
    """One pass of the pipeline: its name, whether it changed the module, its run time."""

    name: str
    changed: bool
    seconds: float


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: the C++ core's records (``SplitLoop``, ...) as
    dicts, inside dicts, lists and tuples too."""
    if hasattr(value, "_asdict") and not isinstance(value, type):
        return value._asdict()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value) if type(value) in (list, tuple) else value
    return value


def _format_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


@dataclasses.dataclass
class Report:
    """The effect of :func:`exla.optimize_hlo` on one module.

    Attributes:
      passes: the passes run, in order.
      instructions_before: instructions of the input (all computations).
      instructions_after: instructions of the output.
      largest_tensor_bytes_before: size of the largest array any instruction
        of the input produces (of what one device holds, for a module
        sharded over ``devices``).
      largest_tensor_bytes_after: the same for the output; inside a loop body
        this is the size of one slice.
      largest_tensor_before: ``"<computation>/<instruction> <shape>"`` of it.
      largest_tensor_after: the same for the output.
      planned_temp_bytes_before: XLA's planned scratch memory of the input
        (CPU buffer assignment), when requested.
      planned_temp_bytes_after: the same for the output.
      seconds: wall time of the whole optimisation (excluding planned memory).
      threshold: the size limit the passes worked to, if any.
      messages: ``(pass name, message)`` notes the passes left, e.g. why a
        tensor could not be split.
      memory_limit: the program-level limit asked for, if any.
      planned_peak_bytes: XLA's planned peak (temporaries, arguments and
        outputs) of the output, measured under a memory limit.
      limit_plan: the search under the memory limit: the candidates tried,
        the plan chosen, XLA's compilations (an ``exla.memory_limit.limit_plan.LimitPlan``).
      devices: the devices a sharded module is partitioned over (1 for a
        module without shardings). Sizes, thresholds and planned memory are
        then per device.
      predicted_peak_bytes: exla's memory model's prediction of XLA's
        planned peak (arguments, outputs, temporaries and constants) of the
        input and of the output, ``(before, after)``, when reported (see
        :func:`exla.predict_peak`).
      split_loops: the loops the tensor splitter built in the output, as data
        (``exla._splitter_result.SplitLoop``: the tensor, the dimension, its
        extent, the chunks, what the loop computes again).
      unsplit: the instructions the tensor splitter left above its threshold,
        each with its reason, as data (``exla._splitter_result.UnsplitTensor``).

    >>> import exla
    >>> hlo = "HloModule m\\n\\nENTRY e {\\n  x = f32[4] parameter(0)\\n  d = f32[4] negate(x)\\n  ROOT y = f32[4] add(x, x)\\n}"
    >>> _, report = exla.optimize_hlo(hlo, passes=["dce"])
    >>> report.changed_passes, report.instructions_before, report.instructions_after
    (['dce'], 3, 2)
    """

    passes: list[PassRecord] = dataclasses.field(default_factory=list)
    instructions_before: int = 0
    instructions_after: int = 0
    largest_tensor_bytes_before: int = 0
    largest_tensor_bytes_after: int = 0
    largest_tensor_before: str = ""
    largest_tensor_after: str = ""
    planned_temp_bytes_before: int | None = None
    planned_temp_bytes_after: int | None = None
    seconds: float = 0.0
    threshold: int | None = None
    messages: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    memory_limit: int | None = None
    planned_peak_bytes: int | None = None
    limit_plan: Any = None
    devices: int = 1
    predicted_peak_bytes: tuple[int, int] | None = None
    split_loops: tuple[SplitLoop, ...] = ()
    unsplit: tuple[UnsplitTensor, ...] = ()

    @property
    def changed_passes(self) -> list[str]:
        """Names of the passes that changed the module, in the order they ran."""
        return [p.name for p in self.passes if p.changed]

    @property
    def changed(self) -> bool:
        """Whether any pass changed the module."""
        return any(p.changed for p in self.passes)

    @property
    def rewrote_program(self) -> bool:
        """Whether a pass other than the clean-ups (the C++ core's list) changed the module.

        A clean-up alone (e.g. remove-copies dropping the copies TensorFlow
        emits for variable updates) is no reason to replace the original
        program, so the frontends run the rewritten one only when this holds.
        """
        cleanups = set(_core.cleanup_passes())
        return any(name not in cleanups for name in self.changed_passes)

    @property
    def within_threshold(self) -> bool | None:
        """Whether no tensor of the output exceeds the threshold (None: no threshold)."""
        if not self.threshold:
            return None
        return self.largest_tensor_bytes_after <= self.threshold

    @property
    def within_memory_limit(self) -> bool | None:
        """Whether XLA's planned peak is at most the memory limit (None: no limit)."""
        if self.limit_plan is None:
            return None
        return self.limit_plan.fits

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict of every field plus ``changed_passes``."""
        result = {key: plain(value) for key, value in dataclasses.asdict(self).items()}
        result["passes"] = [p._asdict() for p in self.passes]
        result["messages"] = [list(m) for m in self.messages]
        result["changed_passes"] = self.changed_passes
        if self.limit_plan is not None:
            result["limit_plan"] = plain(dataclasses.asdict(self.limit_plan))
        return result

    def __str__(self) -> str:
        changed = ", ".join(self.changed_passes) or "none"
        count = f"{len(self.passes)} pass" + ("" if len(self.passes) == 1 else "es")
        lines = [f"exla: {count} in {_format_seconds(self.seconds)}; changed: {changed}"]
        width = max((len(p.name) for p in self.passes), default=0)
        for p in self.passes:
            state = "changed" if p.changed else "unchanged"
            lines.append(f"  {p.name:<{width}}  {state:<9}  {_format_seconds(p.seconds):>9}")
        limit = f" (threshold {format_size(self.threshold)})" if self.threshold else ""
        where = f" per device ({self.devices} devices)" if self.devices > 1 else ""
        lines.append(
            f"largest tensor{where}: {format_size(self.largest_tensor_bytes_before)} "
            f"[{self.largest_tensor_before}] -> {format_size(self.largest_tensor_bytes_after)} "
            f"[{self.largest_tensor_after}]{limit}")
        if self.planned_temp_bytes_before is not None or self.planned_temp_bytes_after is not None:
            lines.append(
                f"planned temp memory (XLA CPU): {format_size(self.planned_temp_bytes_before)} -> "
                f"{format_size(self.planned_temp_bytes_after)}")
        if self.predicted_peak_bytes is not None:
            before, after = self.predicted_peak_bytes
            lines.append(f"predicted peak (exla's memory model): {format_size(before)} -> "
                         f"{format_size(after)}")
        lines.append(f"instructions: {self.instructions_before} -> {self.instructions_after}")
        if self.limit_plan is not None:
            lines.extend(self.limit_plan.summary())
        for name, message in self.messages:
            lines.append(f"  note ({name}): {message}")
        return "\n".join(lines)
