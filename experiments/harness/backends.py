"""How the experiments reach TensorFlow's XLA and exla (child side).

The ONE place that decides how a function goes through exla (:func:`exla_path`):

* ``flags``: the unchanged script, with exla's flags in ``XLA_FLAGS`` and exla's
  autoload hook (``exla._autoload``, installed as a ``.pth`` by ``pip install .``);
  the function is the plain ``tf.function(jit_compile=True)``.
* ``function``: ``exla.function(fn, ...)``.
* ``adapter``: trace the HLO, ``exla.optimize_hlo``, ``call_hlo`` (no gradients,
  no captured variables).

``EXLA_EXPERIMENT_PATH`` forces one; the default picks the first available.

exla is limited in one of two ways (:class:`Limit`, the ``limit_kind`` column):
``threshold``, a size per tensor (``--xla_tensor_size_threshold``, with
``--xla_tensor_split_size``), or ``memory``, XLA's planned peak of the whole
program (``--xla_memory_limit``; exla then chooses thresholds itself).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
from typing import Any, Callable, Mapping

__all__ = ["Limit", "limit_of", "exla_path", "flags_env", "jit", "exla_compile", "tf_hlo",
           "jax_hlo", "planned", "plan_fields", "tf_loops", "jax_compiled"]

_MIB = 2**20
LIMIT_KINDS = ("threshold", "memory")


@dataclasses.dataclass(frozen=True)
class Limit:
    """exla's limit in one configuration.

    Attributes:
      kind: ``threshold`` (no tensor above ``size`` outside a loop) or
        ``memory`` (XLA's planned peak of the whole program at most ``size``).
      size: a size as exla parses it, e.g. ``"200MB"``.
      split_size: the slice size of the splitter's loops (None: exla's choice).

    >>> Limit("memory", "3GB").flags()
    ['--xla_memory_limit=3GB']
    >>> Limit("threshold", "200MB", "20MB").keywords()
    {'threshold': '200MB', 'split_size': '20MB'}
    """

    kind: str
    size: str
    split_size: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in LIMIT_KINDS:
            raise ValueError(f"limit kind {self.kind!r}: expected one of {LIMIT_KINDS}")

    def keywords(self) -> dict[str, str]:
        """The keywords of ``exla.function``/``exla.optimize_hlo`` for this limit."""
        out = {"memory_limit" if self.kind == "memory" else "threshold": self.size}
        if self.split_size:
            out["split_size"] = self.split_size
        return out

    def flags(self) -> list[str]:
        """The same limit as flags in ``XLA_FLAGS``."""
        names = {"memory_limit": "--xla_memory_limit", "threshold": "--xla_tensor_size_threshold",
                 "split_size": "--xla_tensor_split_size"}
        return [f"{names[k]}={v}" for k, v in self.keywords().items()]


def limit_of(config: Mapping[str, Any]) -> Limit | None:
    """The limit a configuration row gives exla (None: plain XLA).

    >>> limit_of({"limit": "200MB", "split_size": "20MB"})
    Limit(kind='threshold', size='200MB', split_size='20MB')
    >>> limit_of({"limit": ""}) is None
    True
    """
    if not config.get("limit"):
        return None
    return Limit(config.get("limit_kind") or "threshold", str(config["limit"]),
                 config.get("split_size") or None)


def exla_path() -> str:
    """``flags``, ``function`` or ``adapter``: how this machine's exla is used."""
    forced = os.environ.get("EXLA_EXPERIMENT_PATH")
    if forced:
        return forced
    if importlib.util.find_spec("exla._autoload") is not None:
        return "flags"
    if importlib.util.find_spec("exla.tensorflow") is not None:
        return "function"
    return "adapter"


def flags_env(limit: Limit | None, fast_math: bool = False) -> dict[str, str]:
    """Environment for a child running exla (XLA_FLAGS in the ``flags`` path)."""
    path = exla_path()
    env = {"EXLA_EXPERIMENT_PATH": path}
    if path == "flags" and limit is not None:
        flags = [os.environ.get("XLA_FLAGS", ""), *limit.flags()]
        if fast_math:
            flags.append("--exla_fast_math")
        env["XLA_FLAGS"] = " ".join(f for f in flags if f)
    return env


def jit(fn: Callable[..., Any]) -> Any:
    """Plain TensorFlow: ``tf.function(fn, jit_compile=True)``."""
    import tensorflow as tf

    return tf.function(fn, jit_compile=True)


def exla_compile(fn: Callable[..., Any], limit: Limit, fast_math: bool = False) -> Any:
    """``fn`` compiled through exla, by :func:`exla_path`'s route."""
    path = exla_path()
    if path == "flags":
        return jit(fn)  # the unchanged script; XLA_FLAGS is set for this process
    if path == "function":
        from exla import function

        return function(fn, strict=True, fast_math=fast_math, **limit.keywords())
    return _Adapter(jit(fn), limit, fast_math)


class _Adapter:
    """Trace HLO -> ``exla.optimize_hlo`` -> ``call_hlo``, cached per input shapes."""

    def __init__(self, tf_fn: Any, limit: Limit, fast_math: bool = False) -> None:
        self.tf_fn, self.limit, self.fast_math = tf_fn, limit, fast_math
        self._texts: dict[tuple, str] = {}
        self.reports: list[Any] = []

    def __call__(self, *args: Any) -> Any:
        import exla
        from exla.bridge.tensorflow_call import call_hlo

        key = tuple((tuple(a.shape), str(a.dtype)) for a in args)
        if key not in self._texts:
            self._texts[key], report = exla.optimize_hlo(tf_hlo(self.tf_fn, args),
                                                         fast_math=self.fast_math,
                                                         **self.limit.keywords())
            self.reports.append(report)
        out = call_hlo(self._texts[key], list(args))
        return out[0] if len(out) == 1 else out


def tf_hlo(tf_fn: Any, args: Any) -> bytes:
    """The HLO module TensorFlow compiles for ``tf_fn(*args)`` (what exla rewrites)."""
    return tf_fn.experimental_get_compiler_ir(*args)(stage="hlo_serialized")


def jax_hlo(jitted: Any, args: Any) -> str:
    """The HLO text of ``jax.jit`` function ``jitted`` for ``args``: what exla's compile hook sees."""
    from exla.bridge import jax as jax_bridge

    return jax_bridge.lowered_hlo_text(jitted.lower(*args))


def planned(hlo: str | bytes) -> dict[str, Any]:
    """XLA's planned memory of the *plain* program (before exla), as row fields.

    ``planned_temp_plain_mb``: temporaries and ``planned_peak_plain_mb``:
    temporaries, arguments and outputs, from compiling the plain module with
    jaxlib's CPU client (the figure to compare exla's against). The figures
    of the program that ran (``planned_temp_mb``, ``planned_peak_mb``) come
    from that program's own executable: :mod:`experiments.harness.executed`.
    """
    from exla.bridge import xla

    text = hlo if isinstance(hlo, str) else xla.proto_to_text(hlo)
    before = xla.planned_memory(text)
    return {"planned_temp_plain_mb": before.temp_bytes / _MIB,
            "planned_peak_plain_mb": before.total_bytes / _MIB}


def tf_loops(tf_fn: Any, args: Any) -> int:
    """``while`` loops in TensorFlow's optimised program of ``tf_fn(*args)`` (compiled, not run).

    For the exla backend, called on the plain ``tf.function`` before the timed
    calls: ``loops_plain``, against which the executable that ran is compared.
    """
    from experiments.harness.executed import count_loops

    return count_loops(tf_fn.experimental_get_compiler_ir(*args)(stage="optimized_hlo"))


def jax_compiled(fn: Callable[..., Any], args: Any, backend: str) -> tuple[Any, dict[str, Any]]:
    """``(executable, row fields)``: ``jax.jit(fn)`` compiled ahead of time for ``args``.

    The row times this executable, so its loops and XLA's planned memory are
    those of the program that ran (exla's flags in ``XLA_FLAGS`` rewrite it at
    JAX's compile step). For the exla backend the same program is also
    compiled with only exla's dead-code pass, which leaves JAX's own module:
    ``loops_plain``, ``planned_temp_plain_mb`` and ``ran_rewritten`` compare
    against it.
    """
    import jax

    from experiments.harness.executed import jax_executed

    compiled = jax.jit(fn).lower(*args).compile()
    plain = None
    if backend == "exla":
        import exla

        plain = exla.jit(fn, passes=["dce"]).lower(*args).compile()
    return compiled, jax_executed(compiled, plain)


def plan_fields(fn: Any) -> dict[str, Any]:
    """After a call of ``fn`` (from :func:`exla_compile`): what exla chose, as row fields.

    ``exla_plan``: the plan and loops exla's report describes;
    ``exla_rewrote``: ``yes``/``no``, whether exla's report says it rewrote
    the program (the runner compares it with what ran); with a memory limit,
    ``search_peak_mb``: the peak exla's search measured for its plan. Empty
    when exla has not run on ``fn``.
    """
    reports = _reports(fn)
    if not reports:
        return {}
    report = reports[-1]
    fields: dict[str, Any] = {"exla_plan": _describe(report),
                              "exla_rewrote": "yes" if report.rewrote_program else "no"}
    plan = report.limit_plan
    if plan is not None:
        fields["search_peak_mb"] = plan.peak_bytes / _MIB
    return fields


def _reports(fn: Any) -> list[Any]:
    if isinstance(fn, _Adapter):
        return fn.reports
    # The flags path: exla's wrapper of a patched tf.function (exla.tensorflow.patch).
    wrapper = getattr(fn, "__dict__", {}).get("_exla_function", fn)
    return [p.report for p in getattr(wrapper, "programs", [])]


_SPLIT_NOTE = re.compile(r"^split \S+ (?P<shape>\S+) \([^)]*\) on dimension (?P<dim>\d+) of extent "
                         r"(?P<extent>\d+): (?P<chunks>[^,]+)")


def _describe(report: Any) -> str:
    """One line: the plan a memory limit chose, and the splitter's loops."""
    loops = [m.groupdict() for _, text in report.messages if (m := _SPLIT_NOTE.match(text))]
    parts = [f"{len(loops)} loop(s)"]
    plan = report.limit_plan
    if plan is not None and plan.chosen is not None:
        parts.insert(0, str(plan.chosen))
    parts += [f"{l['shape']} dim {l['dim']}/{l['extent']}: {l['chunks']}" for l in loops]
    return "; ".join(parts)
