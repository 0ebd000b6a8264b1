"""Corpus report: programs per framework, round trip, rewriting, verifier agreement.

``python -m experiments corpus_report [--results-dir DIR]`` builds every
program of ``experiments/corpus`` (real TensorFlow, tf_keras, GPflow, TFP, JAX,
flax and optax programs lowered to HLO text), and for each one measures:

- round trip: exla's parse + print reproduces the text up to whitespace and
  is a fixed point (the bar of ``tests/ir/test_round_trip.py``);
- verdicts: exla's verifier and XLA's (parser, HLO importer, MLIR verifier;
  ``exla.bridge.xla.verify_without_exla`` in a child process) on the program
  and on its deterministic mutants (``experiments/corpus/mutations.py``), classified
  by ``experiments/corpus/checks.classify``;
- rewriting: whether the default pipeline changes the program at the forced
  threshold (``checks.forced_threshold``), and the splitter's reason if not.

Results computed here are not the numerical checks of rewritten programs;
those are ``tests/ir/test_corpus_passes.py``. Prints a summary and writes
``experiments/results/corpus.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import platform
import re
import time
from pathlib import Path

from experiments import RESULTS_DIR


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _program_record(name, programs, checks, mutants, xla_verdicts, core):
    import exla

    start = time.perf_counter()
    program = programs.get(name)
    build_seconds = time.perf_counter() - start
    text = program.hlo_text
    record = {
        "name": name, "framework": program.framework, "source": program.source,
        "instructions": program.instruction_count, "characters": len(text),
        "build_seconds": round(build_seconds, 2), "description": program.description,
    }
    try:
        reprinted = core.round_trip(text)
        record["round_trip"] = (_normalise(reprinted) == _normalise(text)
                                and core.round_trip(reprinted) == reprinted)
    except ValueError as e:
        record["round_trip"] = False
        record["round_trip_error"] = str(e)[:500]

    verdicts = collections.Counter()
    disagreements = []
    cases = [("original", text)] + mutants(text)
    for kind, case in cases:
        exla_ok, exla_message = checks.exla_verdict(case)
        xla = xla_verdicts.verdict(case)
        verdicts["xla_aborts"] += xla.aborted
        verdict = checks.classify(case, exla_ok, exla_message, xla.accepted)
        verdicts[verdict] += 1
        if kind == "original":
            record["exla_accepts"], record["xla_accepts"] = exla_ok, xla.accepted
        if verdict == "disagree":
            disagreements.append({"mutant": kind, "exla": exla_message[:500] or "accepted",
                                  "xla": xla.message[:500] or "accepted"})
    record["verdicts"] = {"texts": len(cases), **dict(verdicts)}
    record["disagreements"] = disagreements

    if record.get("exla_accepts"):
        threshold = checks.forced_threshold(text)
        _, report = exla.optimize_hlo(text, threshold=threshold, strict=False)
        record["forced_threshold_bytes"] = threshold
        record["rewritten"] = bool(report.changed)
        record["changed_passes"] = list(report.changed_passes)
        if not report.changed:
            record["unchanged_reason"] = checks.unchanged_reason(text, threshold, report)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments corpus_report",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    logging.getLogger("exla").setLevel(logging.ERROR)  # threshold warnings: in the report

    from exla import _core
    from experiments.corpus import checks, programs
    from experiments.corpus.mutations import mutants
    from experiments.corpus.xla_verdicts import XlaVerdicts

    start = time.perf_counter()
    xla_verdicts = XlaVerdicts()
    try:
        records = [_program_record(name, programs, checks, mutants, xla_verdicts, _core)
                   for name in programs.names()]
    finally:
        xla_verdicts.close()
    seconds = time.perf_counter() - start

    per_framework = collections.Counter(r["framework"] for r in records)
    counted = [r for r in records if "rewritten" in r]
    totals = collections.Counter()
    for r in records:
        totals.update({k: v for k, v in r["verdicts"].items()})
    summary = {
        "programs": len(records),
        "programs_per_framework": dict(sorted(per_framework.items())),
        "instructions": sum(r["instructions"] for r in records),
        "build_seconds": round(sum(r["build_seconds"] for r in records), 1),
        "round_tripped": sum(r["round_trip"] for r in records),
        "accepted_by_exla": sum(bool(r.get("exla_accepts")) for r in records),
        "accepted_by_xla": sum(bool(r.get("xla_accepts")) for r in records),
        "rewritten_at_forced_threshold": sum(r["rewritten"] for r in counted),
        "unchanged_at_forced_threshold": {r["name"]: r["unchanged_reason"]
                                          for r in counted if not r["rewritten"]},
        "verdict_texts": totals["texts"],
        "verdicts_agree": totals["agree"],
        "verdicts_listed_exceptions": sum(v for k, v in totals.items()
                                          if k.startswith("exception: ")),
        "verdicts_disagree": totals["disagree"],
        "xla_aborts": totals["xla_aborts"],
        "listed_exceptions": {name: reason for name, reason, _ in checks.STRICTER_ON_PURPOSE},
        "seconds": round(seconds, 1),
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
    }
    args.results_dir.mkdir(parents=True, exist_ok=True)
    out = args.results_dir / "corpus.json"
    out.write_text(json.dumps({"summary": summary, "programs": records}, indent=1) + "\n")

    print(f"{'program':34s} {'framework':10s} {'instr':>6s} {'round trip':>10s} "
          f"{'rewritten':>9s} {'verdicts agree':>14s}")
    for r in records:
        v = r["verdicts"]
        print(f"{r['name']:34s} {r['framework']:10s} {r['instructions']:6d} "
              f"{'yes' if r['round_trip'] else 'NO':>10s} "
              f"{('yes' if r.get('rewritten') else 'no') if 'rewritten' in r else '-':>9s} "
              f"{v.get('agree', 0):>7d} / {v['texts']:<4d}")
    print(f"\n{summary['programs']} programs ({', '.join(f'{k} {v}' for k, v in summary['programs_per_framework'].items())}); "
          f"{summary['round_tripped']} round-tripped; {summary['rewritten_at_forced_threshold']} of "
          f"{len(counted)} rewritten at the forced threshold; verdicts on {summary['verdict_texts']} "
          f"texts: {summary['verdicts_agree']} agree, {summary['verdicts_listed_exceptions']} listed "
          f"exceptions, {summary['verdicts_disagree']} disagree ({summary['xla_aborts']} XLA aborts); "
          f"{summary['seconds']} s")
    print(f"wrote {out}")
    return 1 if summary["verdicts_disagree"] else 0
