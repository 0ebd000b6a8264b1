"""Record what the optimiser does over the test corpus, and replay it after a refactoring.

A structure change (moving code, splitting functions, new ways to pass settings)
must not change what exla does. This tool makes that checkable:

    python -m experiments optimizer_replay record before.jsonl   # on the old commit
    python -m experiments optimizer_replay compare before.jsonl  # on the new one

``record`` runs :func:`exla.optimize_hlo` on every module of the test corpus
(the real TensorFlow/JAX programs of ``experiments/corpus`` and the HLO modules
written in the C++ pass tests) under several settings, and resolves a list of
flag strings with :mod:`exla.options`; each call's outcome (output text, passes
that changed the module, the passes' notes, largest tensor, or the error) is one
JSON line. ``compare`` makes the same calls and prints every difference; its
exit status is the number of differing calls (0: behaviour unchanged).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any, Iterator

from experiments import REPO_ROOT

# Settings each module is optimised under; "forced" is an eighth of the
# module's largest tensor, as experiments/corpus/checks.forced_threshold chooses.
_SETTINGS = (
    ("forced", {}),
    ("forced-fast-math", {"fast_math": True}),
    ("half-split", {"split": True}),
)
# The memory-limit search compiles each candidate with XLA: only for the small
# modules of the C++ tests, at a limit of a quarter of the largest tensor on
# top of it (some fit, some are below the program's floor and are refused).
_LIMIT_SETTING = ("memory-limit", {"limit": True})

# Flag strings resolved by exla.options (errors are recorded too).
_FLAGS = (
    "",
    "--xla_tensor_size_threshold=1GB",
    "--xla_tensor_size_threshold=100MiB --xla_tensor_split_size=10MB",
    "--xla_memory_limit=4GB --exla_fast_math=true",
    "--xla_memory_limit=4GB --exla_strict",
    "--exla_passes=dce,remove-copies --xla_disable_hlo_passes=dce",
    "--exla_dump_to=/tmp/exla-replay-dump",
    "--xla_tensor_size_threshold=12XB",
    "--xla_tensor_size_threshold",
    "--xla_tensor_bogus=1",
    "--xla_cpu_enable_fast_math=false --xla_tensor_size_threshold=1kB",
    "--exla_fast_math=maybe",
)

_OPTION_FIELDS = ("threshold", "split_size", "memory_limit", "passes", "disabled_passes",
                  "dump_dir", "strict", "fast_math")


def _cc_test_modules() -> Iterator[tuple[str, str]]:
    """The HLO modules written as raw strings in tests/cc/**/*_test.cc."""
    import exla
    from exla import _core

    wrappers = (
        lambda body: body,
        lambda body: ("HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n" + body + "}\n"),
        lambda body: "HloModule m\n\nENTRY main {\n" + body + "\n}\n",
    )
    del exla
    for path in sorted((REPO_ROOT / "tests" / "cc").rglob("*_test.cc")):
        source = path.read_text()
        for index, match in enumerate(re.finditer(r'R"(\w*)\((.*?)\)\1"', source, re.S)):
            body = match.group(2)
            if "CHECK" in body or " = " not in body:
                continue
            for wrap in wrappers:
                text = wrap(body)
                try:
                    _core.verify(text)
                except Exception:  # noqa: BLE001 - not a whole module in this form
                    continue
                yield f"{path.relative_to(REPO_ROOT)}#{index}", text
                break


def _corpus_modules() -> Iterator[tuple[str, str]]:
    from experiments.corpus import programs

    for name in programs.names():
        yield f"corpus:{name}", programs.get(name).hlo_text


def _largest(text: str) -> int:
    from exla import _core

    sizes = [t.bytes for t in _core.tensor_sizes(text)]
    return max(sizes, default=0)


def _outcome(call: Any) -> dict:
    try:
        return {"ok": call()}
    except Exception as e:  # noqa: BLE001 - the error is part of the behaviour
        return {"error": f"{type(e).__name__}: {e}"}


def _optimize_calls(name: str, text: str, with_limit: bool) -> Iterator[tuple[str, Any]]:
    import exla

    largest = _largest(text)
    forced = max(64, min(16384, largest // 8))
    for label, setting in _SETTINGS + ((_LIMIT_SETTING,) if with_limit else ()):
        kwargs: dict[str, Any] = {"threshold": forced}
        if setting.get("fast_math"):
            kwargs["fast_math"] = True
        if setting.get("split"):
            kwargs = {"threshold": max(64, largest // 2), "split_size": max(16, largest // 16)}
        if setting.get("limit"):
            kwargs = {"memory_limit": largest + largest // 4}

        def call(kwargs: dict = kwargs) -> dict:
            out, report = exla.optimize_hlo(text, **kwargs)
            return {
                "text_sha": hashlib.sha256(out.encode()).hexdigest(),
                "text": out if len(out) < 20000 else None,
                "changed": list(report.changed_passes),
                "messages": [list(m) for m in report.messages],
                "largest_after": report.largest_tensor_bytes_after,
                "instructions_after": report.instructions_after,
                "planned_peak": report.planned_peak_bytes,
            }

        yield f"optimize {name} {label}", call


def _flag_calls() -> Iterator[tuple[str, Any]]:
    from exla import options

    for flags in _FLAGS:
        def call(flags: str = flags) -> dict:
            opts, rest = options.split_xla_flags(flags)
            return {"options": {f: _jsonable(getattr(opts, f)) for f in _OPTION_FIELDS},
                    "rest": rest}

        yield f"flags {flags!r}", call


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _calls() -> Iterator[tuple[str, Any]]:
    yield from _flag_calls()
    for name, text in _cc_test_modules():
        yield from _optimize_calls(name, text, with_limit=True)
    for name, text in _corpus_modules():
        yield from _optimize_calls(name, text, with_limit=False)


def _record(path: Path) -> int:
    count = 0
    with path.open("w") as out:
        for key, call in _calls():
            out.write(json.dumps({"key": key, **_outcome(call)}, sort_keys=True) + "\n")
            count += 1
    print(f"recorded {count} calls in {path}")
    return 0


def _compare(path: Path) -> int:
    recorded = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        recorded[entry.pop("key")] = entry
    seen, differences = 0, 0
    for key, call in _calls():
        seen += 1
        now = json.loads(json.dumps(_outcome(call), sort_keys=True))
        before = recorded.pop(key, None)
        if before != now:
            differences += 1
            print(f"DIFFERENT {key}\n  before: {str(before)[:600]}\n  now:    {str(now)[:600]}")
    for key in recorded:
        differences += 1
        print(f"MISSING {key}")
    print(f"replayed {seen} calls: {differences} differences")
    return min(differences, 255)


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``record FILE`` or ``compare FILE``."""
    parser = argparse.ArgumentParser(prog="python -m experiments optimizer_replay",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    logging.getLogger("exla").setLevel(logging.ERROR)
    return _record(args.file) if args.mode == "record" else _compare(args.file)
