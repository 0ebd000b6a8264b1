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

__all__ = ["DIRECTORY", "INDEX", "modules"]

DIRECTORY = Path(__file__).with_name("heldout_modules")
INDEX = DIRECTORY / "index.json"
"""A list of {file, program, variant, source, framework, origin}."""


def modules() -> list[Module]:
    """Every stored held-out module, in the index's order."""
    entries = json.loads(INDEX.read_text())
    return [Module(e["program"], e["variant"], e["source"], e["framework"],
                   (DIRECTORY / e["file"]).read_text()) for e in entries]
