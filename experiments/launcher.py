"""``python -m experiments NAME [options]``: every experiment and tool, by name.

``python -m experiments --help`` lists them, one line each (the first line of
the module's docstring); ``python -m experiments NAME --help`` gives one's
options. The names are those of experiments/commands.py. A command's
``main(argv)`` runs it, except a sweep's: a workload that declares its
configurations instead, which :mod:`experiments.sweep_command` runs, one
capped child process per configuration, before it writes RESULTS.md.

This module imports nothing of experiments but the package's paths and the
table at its top, and a command's module only when it runs, so that
``gpu_check`` runs where only JAX is installed (no harness, no TensorFlow).
"""

from __future__ import annotations

import importlib
import sys

from experiments import prefer_checkout_exla
from experiments.commands import COMMANDS

__all__ = ["main", "usage"]


def usage() -> str:
    """The launcher's help: every command with its one line, by part."""
    lines = ["usage: python -m experiments NAME [options]",
             "       python -m experiments NAME --help   (its options)", ""]
    width = max(map(len, COMMANDS)) + 2
    for part in dict.fromkeys(c.part for c in COMMANDS.values()):
        lines.append(f"{part}:")
        lines += [f"  {name:<{width}}{command.summary()}" + (" [sweep]" if command.sweep else "")
                  for name, command in COMMANDS.items() if command.part == part]
    lines += ["", "[sweep]: one capped child process per configuration, one CSV row each, "
              "then RESULTS.md; see experiments/README.md"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Runs the command ``argv[0]`` with the rest of ``argv``; its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"python -m experiments: no command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    prefer_checkout_exla()  # before any command imports exla
    command = COMMANDS[name]
    module = importlib.import_module(command.module)
    if command.sweep:
        # Imported here, not at the top: it brings the harness and RESULTS.md's
        # every workload, which gpu_check's JAX-only machines need not have.
        from experiments import sweep_command

        return sweep_command.main(name, module, rest)
    return module.main(rest)
