"""exla's command line.

    python -m exla optimize FILE [--threshold SIZE] [--split-size SIZE]
                                 [--memory-limit SIZE] [--passes A,B]
                                 [--disabled-passes A,B] [--dump-dir DIR]
                                 [--strict] [--fast-math]
                                 [--output FILE] [--no-memory] [--plot FILE.png]
    python -m exla predict FILE [--plot FILE.png]
    python -m exla passes

``optimize`` has one option per setting of :class:`exla.options.Options`, named after it.

``optimize`` reads HLO text or a serialized ``HloModuleProto`` (``-`` reads
standard input), writes the optimised HLO text to standard output (or
``--output``) and a short report to standard error. Bad input (a missing file,
malformed HLO, a bad size or pass name) gives a one-line error and exit
status 2; an internal failure gives exit status 1.

``predict`` prints the memory model's prediction of XLA's planned peak for a
module (arguments, outputs, temporaries, constants) and the cost model's
prediction of its time on this machine's CPU, without compiling it.

``--plot FILE.png`` draws the memory model's memory over the schedule
(matplotlib): for ``optimize`` the module before and after, with the memory
limit, for ``predict`` the module alone; the largest tensors at each peak are
named.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import NoReturn, Sequence, TextIO

from exla import __version__
from exla._values import format_flops, format_seconds
from exla.bridge import xla as bridge
from exla.errors import ExlaError
from exla.optimize import as_hlo_text, available_passes, default_pipeline, optimize_hlo
from exla.options import declared_settings, format_size
from exla.predict import plot_memory, predict_cost, predict_memory

__all__ = ["main"]

_PROG = "exla"
_EXIT_BAD_INPUT = 2
_EXIT_FAILURE = 1


class _Failure(Exception):
    """An error to report in one line, with its exit status."""

    def __init__(self, message: str, status: int = _EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage before the error; one line (with a hint)
    # is easier to read in scripts and logs.
    def error(self, message: str) -> NoReturn:
        self.exit(_EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_settings(parser: argparse.ArgumentParser) -> None:
    """One option per setting (``--split-size`` for ``split_size``), from its declaration."""
    for declaration in declared_settings():
        if declaration.keyword:
            parser.add_argument(f"--{declaration.name.replace('_', '-')}", dest=declaration.name,
                                help=declaration.help.replace("%", "%%"),
                                **declaration.kind.cli_arguments())


_PLOT_HELP = ("draw the memory model's memory over the schedule into FILE.png "
              "(needs matplotlib), the largest tensors at the peak named")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=_PROG, description="exla: memory-safe XLA programs.")
    parser.add_argument("--version", action="version", version=f"exla {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what exla does")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    optimize = commands.add_parser(
        "optimize", help="optimise an HLO module",
        description="Runs exla's passes on an HLO module (text or serialized HloModuleProto).")
    optimize.add_argument("file", metavar="FILE", help="HLO text or serialized HloModuleProto; '-' for stdin")
    _add_settings(optimize)
    optimize.add_argument("-o", "--output", metavar="FILE",
                          help="write the optimised HLO to FILE instead of stdout")
    optimize.add_argument("--no-memory", action="store_true",
                          help="skip XLA's planned memory before/after (needs no jax then)")
    optimize.add_argument("--plot", metavar="FILE.png", help=_PLOT_HELP + " before and after exla")

    predict = commands.add_parser(
        "predict", help="predict XLA's planned memory and time of an HLO module",
        description="Prints the memory model's prediction of XLA CPU's planned peak "
        "(arguments + outputs - aliased + temporaries + constants) and the cost model's "
        "prediction of its running time, without compiling.")
    predict.add_argument("file", metavar="FILE", help="HLO text or serialized HloModuleProto; '-' for stdin")
    predict.add_argument("--plot", metavar="FILE.png", help=_PLOT_HELP)

    commands.add_parser("demo", help="run the out-of-memory demonstration "
                        "(python -m exla demo --help)", add_help=False)
    commands.add_parser("passes", help="list exla's passes",
                        description="Lists every pass; '*' marks the default pipeline.")
    return parser


def _read_input(path: str) -> str:
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise _Failure(f"cannot read {path!r}: {e.strerror}") from None
    if not data.strip():
        raise _Failure(f"{path!r} is empty")
    try:
        return as_hlo_text(data)
    except ValueError as e:
        raise _Failure(f"{path!r} is neither HLO text nor a serialized HloModuleProto: "
                       f"{_one_line(e)}") from None


def _one_line(error: BaseException) -> str:
    # XLA's messages span lines (text, caret); the first carries the point.
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def _optimize(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    text = _read_input(args.file)
    settings = {s.name: getattr(args, s.name) for s in declared_settings() if s.keyword}
    try:
        optimised, report = optimize_hlo(text, **settings)
    except ValueError as e:
        raise _Failure(f"{args.file}: {_one_line(e)}") from None
    except ExlaError as e:  # an internal error: a bug in exla, not in the input
        raise _Failure(f"{args.file}: {_one_line(e)}", _EXIT_FAILURE) from None
    except OSError as e:  # e.g. an unwritable --dump-dir
        raise _Failure(f"{e.filename or args.dump_dir}: {e.strerror}") from None

    status = 0
    memory_error = None
    if not args.no_memory:
        try:
            report.planned_temp_bytes_before = bridge.planned_memory(text).temp_bytes
        except (ValueError, RuntimeError) as e:
            raise _Failure(f"{args.file}: XLA rejects the module: {_one_line(e)}") from None
        try:
            report.planned_temp_bytes_after = bridge.planned_memory(optimised).temp_bytes
        except (ValueError, RuntimeError) as e:
            # exla produced a module XLA rejects: a bug in exla. Still write it
            # out, since that is what is needed to report and debug it.
            memory_error = f"XLA rejects the optimised module (a bug in exla): {_one_line(e)}"
            status = _EXIT_FAILURE

    if args.output:
        try:
            with open(args.output, "w") as f:
                f.write(optimised)
        except OSError as e:
            raise _Failure(f"cannot write {args.output!r}: {e.strerror}") from None
    else:
        stdout.write(optimised if optimised.endswith("\n") else optimised + "\n")
        stdout.flush()
    print(report, file=stderr)
    if args.plot:
        _plot(args.plot, text, optimised if report.rewrote_program else None, report.memory_limit,
              args.file)
    if memory_error:
        print(f"{_PROG}: error: {memory_error}", file=stderr)
    return status


def _predict(args: argparse.Namespace, stdout: TextIO) -> int:
    text = _read_input(args.file)
    try:
        p = predict_memory(text)
        t = predict_cost(text)
    except ValueError as e:
        raise _Failure(f"{args.file}: {_one_line(e)}") from None
    except ExlaError as e:
        raise _Failure(f"{args.file}: {_one_line(e)}", _EXIT_FAILURE) from None
    print(f"predicted peak: {p.peak_bytes} bytes ({format_size(p.peak_bytes)}): arguments "
          f"{format_size(p.argument_bytes)}, outputs {format_size(p.output_bytes)}, aliased "
          f"{format_size(p.alias_bytes)}, temporaries {format_size(p.temp_bytes)} "
          f"({p.buffers} buffers), constants {format_size(p.constant_bytes)}", file=stdout)
    print(f"predicted time: {format_seconds(t.seconds)}: {format_flops(t.flops)} "
          f"({format_flops(t.dot_flops)} in matrix products), {format_size(t.bytes)} moved, "
          f"{t.kernels} kernels, {t.trips} loop trips", file=stdout)
    print("(exla's memory and cost models of XLA CPU; other backends plan and run differently)",
          file=stdout)
    if args.plot:
        _plot(args.plot, text, None, None, args.file)
    return 0


def _plot(path: str, before: str, after: str | None, memory_limit: int | None, name: str) -> None:
    """Writes the picture of :func:`exla.predict.plot_memory` to ``path``."""
    try:
        plot_memory(before, after, memory_limit=memory_limit, title=os.path.basename(name), path=path)
    except OSError as e:
        raise _Failure(f"cannot write {path!r}: {e.strerror}") from None
    except ValueError as e:  # matplotlib's: an unknown picture format
        raise _Failure(f"cannot write {path!r}: {_one_line(e)}") from None


def _passes(stdout: TextIO) -> int:
    default = default_pipeline()
    for name in available_passes():
        print(f"{'*' if name in default else ' '} {name}", file=stdout)
    print(f"default pipeline: {', '.join(default)}", file=stdout)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["demo"]:
        # The demonstration has options of its own; it imports numpy and a framework
        # (--jax: jax, else TensorFlow), so only `python -m exla demo` loads it.
        from exla import demo

        return demo.main(argv[1:])
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format=f"{_PROG}: %(levelname)s: %(message)s")
    try:
        if args.command == "optimize":
            return _optimize(args, sys.stdout, sys.stderr)
        if args.command == "predict":
            return _predict(args, sys.stdout)
        return _passes(sys.stdout)
    except _Failure as e:
        print(f"{_PROG}: error: {e}", file=sys.stderr)
        return e.status
    except ImportError as e:  # the extension or jaxlib is missing
        print(f"{_PROG}: error: {_one_line(e)}", file=sys.stderr)
        return _EXIT_FAILURE
    except BrokenPipeError:  # e.g. `python -m exla optimize f.hlo | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return _EXIT_FAILURE
