"""Child of test_memory_cap_sgpr: GPflow SGPR loss and gradients, plain XLA or exla.

``python -m tests.python._sgpr_capped_child MODE N M LIMIT [THRESHOLD SPLIT]``, MODE one of

* ``plain``: ``tf.function(jit_compile=True)``;
* ``exla``: ``exla.function(memory_limit=LIMIT, strict=True)`` (with THRESHOLD
  and SPLIT, the search starts from them: fewer XLA compilations);
* ``reference``: ``exla``, then GPflow's loss run eagerly (no XLA) in the
  same process, uncapped: the plan, the fixed runtime cost and the reference
  loss.

Prints one JSON line: the loss, the process's peak resident size
(``VmHWM``) and, for exla, the plan's figures, the fixed runtime cost and how
often the rewritten program ran.
"""

from __future__ import annotations

import json
import sys
import time

_START = time.perf_counter()


def _peak_rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _exla(model, limit: str, threshold: str | None, split: str | None) -> dict:
    import exla
    from experiments.workloads import sgpr

    settings = {"threshold": threshold, "split_size": split} if threshold else {}
    f = exla.function(sgpr.loss_and_gradients(model), memory_limit=limit, strict=True,
                      **settings)
    loss = float(f()[0])
    info = f.programs[0]
    plan = info.report.limit_plan
    cost = plan.runtime_cost
    return {"exla_loss": loss, "runs": info.runs, "rewritten": info.rewritten,
            "planned_peak": plan.peak_bytes, "plain_planned_peak": plan.peak_bytes_before,
            "fits": plan.fits, "fixed_bytes": cost.fixed_bytes,
            "resident_bytes": cost.resident_bytes, "runtime_bytes": cost.runtime_bytes,
            "measure_seconds": cost.seconds, "xla_compiles": plan.xla_compiles,
            "exla_peak_rss": _peak_rss()}


def main(mode: str, n: int, m: int, limit: str, threshold: str | None = None,
         split: str | None = None) -> None:
    import tensorflow as tf

    from experiments.workloads import sgpr

    model = sgpr.make_model(m, n)
    out: dict = {"import_seconds": time.perf_counter() - _START}
    if mode in ("exla", "reference"):
        start = time.perf_counter()
        out.update(_exla(model, limit, threshold, split))
        out["exla_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    if mode == "plain":
        plain = tf.function(sgpr.loss_and_gradients(model), jit_compile=True)
        out["plain_loss"] = float(plain()[0])
    elif mode == "reference":
        out["eager_loss"] = float(model.training_loss())
    out["plain_seconds"] = time.perf_counter() - start
    out["peak_rss"] = _peak_rss()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:])
