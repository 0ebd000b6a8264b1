"""The fuzzers' campaigns as tables, read from the files they wrote (``--results``).

``python -m experiments report`` writes them into experiments/README.md
between ``<!-- fuzz_campaigns:start/end -->``: one row per results file, the
differential fuzzer's (``fuzz_summary*.json``) and the text-mutation
fuzzer's (``fuzz_mutation*.json``), each with its command and commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["campaigns_table"]


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


def _commit(record: dict[str, Any]) -> str:
    commits = record.get("commits") or [record.get("commit")]
    return ", ".join(f"`{c[:7]}`" for c in commits if c) or "—"


def _count(categories: dict[str, int], prefix: str) -> int:
    return sum(n for name, n in categories.items() if name.startswith(prefix))


def _differential(results_dir: Path) -> list[str]:
    lines = ["| results file | command | commit | programs | split | mismatches | crashes "
             "| exceptions | timeouts | wall |", "|---|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(results_dir.glob("fuzz_summary*.json")):
        r = _read(path)
        lines.append(f"| `{path.name}` | `{'; '.join(r['commands'])}` | {_commit(r)} "
                     f"| {r['tried']:,} | {r['split']:,} | {r['mismatches']} | {r['crashes']} "
                     f"| {r['exceptions']} | {r['timeouts']} | {_minutes(r['wall_s'])} |")
    return lines


def _mutation(results_dir: Path) -> list[str]:
    lines = ["| results file | command | commit | mutants (of texts) | refused by both "
             "| accepted by both | intended stricter | intended laxer | disagreements | wall |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(results_dir.glob("fuzz_mutation*.json")):
        r = _read(path)
        c = r["categories"]
        lines.append(f"| `{path.name}` | `{r['command']}` | {_commit(r)} "
                     f"| {r['mutants']:,} ({r['bases']}) | {c.get('agree-reject', 0):,} "
                     f"| {c.get('agree-accept', 0):,} | {_count(c, 'intended-stricter')} "
                     f"| {_count(c, 'intended-laxer')} | {_count(c, 'disagree')} "
                     f"| {_minutes(r['wall_s'])} |")
    return lines


def campaigns_table(results_dir: Path) -> list[str]:
    """The differential campaigns' table, then the mutation campaigns'."""
    return _differential(results_dir) + [""] + _mutation(results_dir)
