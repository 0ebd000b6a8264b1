"""Command line: ``python -m experiments <name> [options]``, ``python -m experiments report``,
``python -m experiments corpus_report`` or ``python -m experiments memory_model``."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from experiments import EXPERIMENTS, prefer_checkout_exla  # noqa: E402

prefer_checkout_exla()

# Commands with options and output of their own, run before the harness (and
# TensorFlow) is imported: gpu_check must run where only JAX is installed.
_COMMANDS = {"fuzz": "experiments.fuzzing.fuzz", "fuzz_mutate": "experiments.fuzzing.fuzz_mutate",
             "corpus_report": "experiments.tools.corpus_report",
             "memory_model": "experiments.tools.memory_model", "gpu_check": "experiments.workloads.gpu_check"}
if __name__ == "__main__" and sys.argv[1:2] and sys.argv[1] in _COMMANDS:
    sys.exit(importlib.import_module(_COMMANDS[sys.argv[1]]).main(sys.argv[2:]))

from experiments import report  # noqa: E402
from experiments import RESULTS_DIR  # noqa: E402
from experiments.harness.runner import run_configs  # noqa: E402
from experiments.harness.sweep import add_limit_arguments  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments", description=__doc__)
    sub = parser.add_subparsers(dest="name", required=True)
    for name, module_name in EXPERIMENTS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an experiment not written yet
            continue
        p = sub.add_parser(name, help=(module.__doc__ or "").splitlines()[0])
        p.add_argument("--smoke", action="store_true", help="tiny, fast variant (for tests)")
        p.add_argument("--cap-gb", type=float, default=module.DEFAULT_CAP_GB,
                       help="hard memory cap per configuration (GiB)")
        p.add_argument("--repeats", type=int, default=3, help="timed calls after the warm-up")
        p.add_argument("--timeout", type=float, default=900.0, help="seconds per configuration")
        p.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
        p.add_argument("--report-only", action="store_true", help="only redo plots and RESULTS.md")
        p.add_argument("--backends", nargs="+", default=module.BACKENDS, choices=module.BACKENDS,
                       help="backends to run (default: all)")
        if "exla" in module.BACKENDS:
            add_limit_arguments(p, module.LIMITS)
        module.add_arguments(p)
    p = sub.add_parser("report", help="regenerate the plots and RESULTS.md from the CSVs")
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in _COMMANDS:
        return importlib.import_module(_COMMANDS[argv[0]]).main(argv[1:])
    args = _parser().parse_args(argv)
    if args.name != "report" and not args.report_only:
        from experiments.harness.backends import flags_env, limit_of

        module = importlib.import_module(EXPERIMENTS[args.name])

        def env_for(config: dict) -> dict[str, str]:
            if config.get("backend") == "exla":
                return flags_env(limit_of(config), fast_math=getattr(module, "FAST_MATH", False))
            return {}

        run_configs(args.name, EXPERIMENTS[args.name], module.configs(args),
                    module.PARAMS + module.METRICS, cap_bytes=int(args.cap_gb * 2**30),
                    timeout_s=args.timeout, results_dir=args.results_dir,
                    size_key=module.SIZE, env_for=env_for,
                    fill_error=getattr(module, "fill_error", None),
                    framework=getattr(module, "FRAMEWORK", "tf"))
    out = report.write_report(args.results_dir)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
