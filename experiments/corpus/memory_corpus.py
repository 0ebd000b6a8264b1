"""The modules exla's memory model is checked on, with XLA's own figures.

Every program of the corpus (`programs.py`: TensorFlow, tf_keras, GPflow,
TFP, JAX, flax, optax) in four forms where they exist:

- ``original``: as the framework lowered it;
- ``rewritten``: after exla's default pipeline at the forced threshold
  (`checks.forced_threshold`, as `tests/ir/test_corpus_passes.py` runs it),
  when a pass changed it: the loops the splitter builds;
- ``f64`` and ``f64-rewritten``: the same with f32 widened to f64
  (`checks.float64_variant`; programs that permit it, at most
  `MAX_FLOAT64_INSTRUCTIONS` instructions).

Duplicate texts are kept once. XLA's figure is its planned peak with
constants (`exla.bridge.xla.planned_memory(text).total_bytes`), the figure a
memory limit bounds and the model predicts.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Iterator

__all__ = ["Module", "modules", "rewritten", "compare", "Comparison", "MAX_FLOAT64_INSTRUCTIONS", "TOLERANCE"]

MAX_FLOAT64_INSTRUCTIONS = 2000
TOLERANCE = 0.10
"""A prediction counts as right when within this fraction of XLA's figure."""


@dataclasses.dataclass(frozen=True)
class Module:
    program: str
    variant: str  # original, rewritten, f64, f64-rewritten
    source: str
    framework: str
    text: str

    @property
    def label(self) -> str:
        return f"{self.program}[{self.variant}]"


def rewritten(text: str) -> str | None:
    """The pipeline's module at the forced threshold, or None when unchanged."""
    import exla

    from . import checks

    logger = logging.getLogger("exla")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the threshold is forced: warnings are expected
    try:
        out, report = exla.optimize_hlo(text, threshold=checks.forced_threshold(text), strict=False)
    finally:
        logger.setLevel(level)
    return out if report.changed else None


def modules(names: list[str] | None = None) -> Iterator[Module]:
    """Every distinct module of the forms above, program by program."""
    from . import checks, programs

    seen: set[str] = set()
    for name in names or programs.names():
        program = programs.get(name)
        forms = [("original", program.hlo_text)]
        if program.instruction_count <= MAX_FLOAT64_INSTRUCTIONS:
            variant = checks.float64_variant(program)
            if variant is not None:
                forms.append(("f64", variant[0]))
        for variant, text in list(forms):
            changed = rewritten(text)
            if changed is not None:
                forms.append((f"{variant}-rewritten".replace("original-", ""), changed))
        for variant, text in forms:
            if text not in seen:
                seen.add(text)
                yield Module(name, variant, program.source, program.framework, text)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The model's prediction of one module against XLA's buffer assignment."""

    module: Module
    predicted: int
    xla: int
    xla_temp: int
    xla_constants: int
    predict_seconds: float
    xla_seconds: float

    @property
    def ratio(self) -> float:
        return self.predicted / self.xla

    @property
    def within(self) -> bool:
        return abs(self.ratio - 1) <= TOLERANCE

    @property
    def too_low(self) -> bool:
        """Below XLA by more than the tolerance: what would break a limit."""
        return self.ratio < 1 - TOLERANCE


def compare(module: Module) -> Comparison:
    """Predicts ``module`` and compiles it with XLA's CPU backend."""
    import time

    import exla
    from exla.bridge import xla as bridge

    start = time.perf_counter()
    predicted = exla.predict_peak(module.text)
    middle = time.perf_counter()
    stats = bridge.planned_memory(module.text)
    end = time.perf_counter()
    return Comparison(module, predicted, stats.total_bytes, stats.temp_bytes, stats.constant_bytes,
                      middle - start, end - middle)
