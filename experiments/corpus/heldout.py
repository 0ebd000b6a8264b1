"""The memory model's held-out set: modules it is never adjusted against.

The corpus (`memory_corpus.py`) is what exla's memory model was tuned on; a
figure on it says little about programs nobody looked at. The held-out set
is stored as HLO text in ``heldout_modules/`` (one file a module, listed in
``index.json`` with where it came from), written once by ``python -m
experiments heldout_corpus`` (experiments/fuzzing/heldout_corpus.py):

- programs drawn by the fuzzer's generator (`experiments.fuzzing.
  fuzz_programs.generate`) with fixed seeds, each as lowered and after exla's
  rewrite at the program's own threshold and split size;
- the framework programs of `heldout_programs.py`, as lowered and after
  exla's pipeline at the forced threshold (`memory_corpus.rewritten`).

Draws: the first (draw 1, written 2026-11-28) has since been studied in
part: sessions read XLA's dumps of its worst modules to find the rules the
model lacked (each rule checked on a small module of its own). Such a
module is no longer held out in spirit, so later draws (``heldout_corpus
--new-draw``: new fuzzer seeds, appended) are reported apart, and a draw
nobody has studied is the figure to trust.

Stored, not rebuilt: the check is the same on every machine and every
framework version, and changing the model cannot change the modules. Do not
edit the model to fit them: a module that misses is reported, and fixing the
model for it makes it part of the tuned set (move it to the corpus and draw
new seeds).
"""

from __future__ import annotations

import json
from pathlib import Path

from .memory_corpus import Module

__all__ = ["DIRECTORY", "INDEX", "draw_of", "draws", "modules"]

DIRECTORY = Path(__file__).with_name("heldout_modules")
INDEX = DIRECTORY / "index.json"
"""A list of {file, program, variant, source, framework, origin[, draw]}."""


def draw_of(entry: dict) -> int:
    """An index entry's draw: 1 for the first set, which names none."""
    return int(entry.get("draw", 1))


def draws() -> list[int]:
    """The draws stored, in order."""
    return sorted({draw_of(e) for e in json.loads(INDEX.read_text())})


def modules(draw: int | None = None) -> list[Module]:
    """The stored held-out modules of ``draw`` (every draw by default), in the index's order."""
    entries = json.loads(INDEX.read_text())
    return [Module(e["program"], e["variant"], e["source"], e["framework"],
                   (DIRECTORY / e["file"]).read_text())
            for e in entries if draw is None or draw_of(e) == draw]
