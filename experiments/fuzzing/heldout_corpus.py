"""Writes the memory model's held-out modules (experiments/corpus/heldout_modules/).

``python -m experiments heldout_corpus [--programs 40] [--out DIR] [--new-draw]``

The fuzzer's generator (`fuzz_programs.generate`) draws ``--programs``
programs from the fixed seeds ``SEED_BASE + i`` (never used by a fuzzing run,
whose seeds are the run's seed times a million plus an index, with runs
numbered well below 43,000), each lowered and rewritten by exla at its own
threshold and split size (`fuzz.default_rewrite`); the framework programs of
`experiments/corpus/heldout_programs.py` are lowered and rewritten at the
forced threshold (`memory_corpus.rewritten`). Each distinct module is written
as HLO text with an ``index.json`` saying where it came from.

The set is meant to be written once and kept: the model is checked against
it (tests/analysis/test_memory_model_heldout.py), never tuned to it. Writing
it again after a change of exla's rewrites or of the frameworks changes the
modules; say so in the commit.

Once a module's miss has been studied to find a rule, the module says
little about programs nobody looked at. ``--new-draw`` then adds a draw:
``--programs`` fuzzer programs from the seeds after the last one stored,
appended to the index under the next draw number and leaving every stored
module as it is (heldout.py reports each draw apart).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

from experiments.corpus import heldout, heldout_programs, memory_corpus

from . import fuzz, fuzz_programs

SEED_BASE = 43_000_000_000
"""The first seed; the fuzzer's runs draw ``run seed * 1e6 + index``."""


def _fuzz_modules(count: int, first_seed: int = SEED_BASE) -> list[tuple[dict, str]]:
    import jax

    jax.config.update("jax_enable_x64", True)  # f64 programs stay f64, as the fuzzer runs them
    out = []
    for seed in range(first_seed, first_seed + count):
        program = fuzz_programs.generate(seed)
        text = fuzz_programs.lower(program, fuzz_programs.make_inputs(program))
        source = "tensorflow" if program.frontend == "tf" else "jax"
        entry = {"program": f"fuzz_{seed}", "source": source, "framework": source,
                 "origin": program.describe()}
        out.append(({**entry, "variant": "original"}, text))
        rewritten, _ = fuzz.default_rewrite(text, program, None)
        out.append(({**entry, "variant": "rewritten"}, rewritten))
    return out


def _framework_modules() -> list[tuple[dict, str]]:
    out = []
    for name, (source, framework, build) in heldout_programs.BUILDERS.items():
        text = build()
        entry = {"program": name, "source": source, "framework": framework,
                 "origin": f"experiments/corpus/heldout_programs.py:{build.__name__}"}
        out.append(({**entry, "variant": "original"}, text))
        rewritten = memory_corpus.rewritten(text)
        if rewritten is not None:
            out.append(({**entry, "variant": "rewritten"}, rewritten))
    return out


def _store(modules: list[tuple[dict, str]], directory: Path, index: list[dict],
           extra: dict) -> list[dict]:
    """Writes each text not in ``index`` yet as ``program.variant.hlo``, then the
    index with them (each entry with ``extra``); returns the new entries."""
    seen = {(directory / e["file"]).read_text() for e in index}
    added = []
    for entry, text in modules:
        if text in seen:
            continue
        seen.add(text)
        entry = {"file": f"{entry['program']}.{entry['variant']}.hlo", **entry, **extra}
        (directory / entry["file"]).write_text(text)
        added.append(entry)
    (directory / heldout.INDEX.name).write_text(json.dumps(index + added, indent=1) + "\n")
    return added


def write(modules: list[tuple[dict, str]], directory: Path) -> list[dict]:
    """Writes each distinct text as ``program.variant.hlo`` and the index; returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.hlo"):
        old.unlink()
    return _store(modules, directory, [], {})


def append_draw(modules: list[tuple[dict, str]], directory: Path) -> list[dict]:
    """Adds ``modules`` not stored yet as the next draw; returns the new entries."""
    index = json.loads((directory / heldout.INDEX.name).read_text())
    return _store(modules, directory, index, {"draw": 1 + max(heldout.draw_of(e) for e in index)})


def _next_seed(directory: Path) -> int:
    """The seed after the last fuzzer program stored."""
    index = json.loads((directory / heldout.INDEX.name).read_text())
    seeds = [int(e["program"].removeprefix("fuzz_")) for e in index
             if e["program"].startswith("fuzz_")]
    return max(seeds, default=SEED_BASE - 1) + 1


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = argparse.ArgumentParser(prog="python -m experiments heldout_corpus",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=40, help="programs the fuzzer draws")
    parser.add_argument("--out", type=Path, default=heldout.DIRECTORY)
    parser.add_argument("--new-draw", action="store_true",
                        help="append --programs new fuzzer programs as the next draw")
    args = parser.parse_args(argv)
    logging.getLogger("exla").setLevel(logging.ERROR)  # forced thresholds warn by design
    if args.new_draw:
        added = append_draw(_fuzz_modules(args.programs, _next_seed(args.out)), args.out)
        print(f"added {len(added)} modules to {args.out} as draw {heldout.draw_of(added[0])}"
              if added else "no new module")
        return 0
    index = write(_framework_modules() + _fuzz_modules(args.programs), args.out)
    print(f"wrote {len(index)} modules to {args.out}")
    return 0
