"""A sweep's command line: ``python -m experiments NAME [options]`` for a sweep workload.

A sweep (kernel_matvec, sgpr, knn, ...) declares its configurations instead
of a ``main``: ``SIZE``, ``PARAMS``, ``METRICS``, ``BACKENDS``, ``LIMITS``,
``DEFAULT_CAP_GB``, ``add_arguments(parser)``, ``configs(args)``, and
``run(config, recorder)`` and ``plot(rows, results_dir)``. This gives every
sweep the same options, runs each configuration in its own capped child
process (experiments/harness/runner.py), one CSV row each, and ends with
RESULTS.md (experiments/report.py), which is why it sits above the report
and not in the harness.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

from experiments import RESULTS_DIR, report
from experiments.harness.backends import flags_env, limit_of
from experiments.harness.runner import run_configs
from experiments.harness.sweep import add_limit_arguments

__all__ = ["main"]


def _parser(name: str, module: ModuleType) -> argparse.ArgumentParser:
    """The options every sweep has, then the sweep's own."""
    parser = argparse.ArgumentParser(prog=f"python -m experiments {name}",
                                     description=(module.__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny, fast variant (for tests)")
    parser.add_argument("--cap-gb", type=float, default=module.DEFAULT_CAP_GB,
                        help="hard memory cap per configuration (GiB)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls after the warm-up")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per configuration")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--report-only", action="store_true",
                        help="only redo the plots and RESULTS.md")
    parser.add_argument("--backends", nargs="+", default=module.BACKENDS, choices=module.BACKENDS,
                        help="backends to run (default: all)")
    if "exla" in module.BACKENDS:
        add_limit_arguments(parser, module.LIMITS)
    module.add_arguments(parser)
    return parser


def main(name: str, module: ModuleType, argv: list[str]) -> int:
    """Runs sweep ``name`` (its ``module``) with the options ``argv``, then RESULTS.md."""
    args = _parser(name, module).parse_args(argv)
    if not args.report_only:

        def env_for(config: dict) -> dict[str, str]:
            if config.get("backend") == "exla":
                return flags_env(limit_of(config), fast_math=getattr(module, "FAST_MATH", False))
            return {}

        run_configs(name, module.__name__, module.configs(args), module.PARAMS + module.METRICS,
                    cap_bytes=int(args.cap_gb * 2**30), timeout_s=args.timeout,
                    results_dir=args.results_dir, size_key=module.SIZE, env_for=env_for,
                    fill_error=getattr(module, "fill_error", None),
                    framework=getattr(module, "FRAMEWORK", "tf"))
    print(f"wrote {report.write_report(args.results_dir)}")
    return 0
