"""How well exla's cost model orders the plans of a program by their measured time.

    python -m experiments cost_rank [--repeats 5] [--out experiments/results/cost_rank.csv]
    python -m experiments cost_rank --replay experiments/results/cost_rank.csv \
        [--set dot_thin_width=256 ...]

Five programs, lowered from JAX at reduced sizes (a few seconds each on two
cores): a kernel matrix-vector product, a large-vocabulary cross entropy (loss
and both gradients: the row plan re-reads the weight on every trip),
attention (softmax of Q Kᵀ times V), a wide MLP layer with its gradient, and a
kNN top-k (a loop over the points merges candidates by sorting them every
trip; one over the queries does not). Each is rewritten with several
``(threshold, split_size)`` settings, as the memory-limit search would try
them (thresholds of 1/2 to 1/32 of the largest tensor; slices of 1/4, 1/2 and
all of the threshold), with each loop moved to each other dimension of its
tensor (the search's "other dimension" plans), and with each value a loop
computes again kept whole (the search's "kept whole" plans, for the default
slices); distinct modules are the plans. Every plan is compiled by XLA's CPU
backend (its planned peak too) and timed (median of ``--repeats`` samples), and
the cost model predicts it.

Reported: per program, Spearman's rank correlation between predicted and
measured times, and then per *case* (a program under a memory limit: the
plans whose XLA peak fits, for limits at each plan's peak that admit at
least two) whether the model's choice is the fastest measured plan (or within
5% of it, the timing noise of this shared machine), beside the choice of the
ranking the search used before the cost model (least recomputed work, fewest
loops, largest slices, largest threshold) and of the search's own rule (that
order, overruled where the model predicts CLEAR_GAIN or more).

A fixed 5% margin cannot tell a near-tie from a miss when samples spread
15-40%, so the cases are also judged by a 95% confidence interval of each
plan's median (order statistics of its samples, recorded in the CSV): a case
counts only if some plan is measurably slower than the fastest (their
intervals do not overlap), and a choice is right if it is not measurably
slower than the fastest.

``--replay CSV`` predicts the plans of a recorded run again with the model as
built now (``--set NAME=VALUE`` replaces a calibrated constant), against the
recorded times: a change to the model is judged in seconds.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from exla.memory_limit.search import CLEAR_GAIN as CLEAR  # the search's own margin

NEAR = 1.05  # a choice within 5% of the fastest measured time is as fast, on this machine


def _kernel_matvec():
    import jax.numpy as jnp

    def f(x, v):
        d = jnp.sum(x * x, 1)[:, None] + jnp.sum(x * x, 1)[None, :] - 2 * x @ x.T
        return jnp.exp(-d) @ v
    rng = np.random.default_rng(0)
    return f, [rng.standard_normal((3000, 16)).astype(np.float32) * 0.3,
               rng.standard_normal((3000, 1)).astype(np.float32)]


def _cross_entropy():
    import jax
    import jax.numpy as jnp

    def loss(h, w, labels):
        logits = h @ w
        picked = jnp.take_along_axis(logits, labels[:, None], 1)[:, 0]
        return jnp.mean(jax.nn.logsumexp(logits, axis=1) - picked)
    rng = np.random.default_rng(1)
    return jax.value_and_grad(loss, argnums=(0, 1)), [
        rng.standard_normal((512, 128)).astype(np.float32),
        rng.standard_normal((128, 16000)).astype(np.float32) * 0.05,
        rng.integers(0, 16000, 512).astype(np.int32)]


def _attention():
    import jax

    def f(q, k, v):
        return jax.nn.softmax(q @ k.T / 8.0, axis=-1) @ v
    rng = np.random.default_rng(2)
    return f, [rng.standard_normal((2048, 64)).astype(np.float32) for _ in range(3)]


def _wide_mlp():
    import jax
    import jax.numpy as jnp

    def loss(w1, w2, x):
        return jnp.sum(jnp.tanh(x @ w1) @ w2)
    rng = np.random.default_rng(3)
    return jax.grad(loss, argnums=(0, 1)), [
        rng.standard_normal((64, 8192)).astype(np.float32) * 0.1,
        rng.standard_normal((8192, 16)).astype(np.float32) * 0.1,
        rng.standard_normal((1024, 64)).astype(np.float32)]


def _knn():
    import jax.numpy as jnp
    from jax import lax

    def f(q, p):
        d = jnp.sum((q[:, None, :] - p[None, :, :]) ** 2, -1)
        values, indices = lax.top_k(-d, 8)
        return -values, indices
    rng = np.random.default_rng(4)
    return f, [rng.random((256, 3)).astype(np.float32),
               rng.random((16384, 3)).astype(np.float32)]


PROGRAMS: dict[str, Callable[[], tuple[Callable, list[np.ndarray]]]] = {
    "kernel_matvec": _kernel_matvec, "cross_entropy": _cross_entropy,
    "attention": _attention, "wide_mlp": _wide_mlp, "knn": _knn}


def _hlo(f: Callable, args: list[np.ndarray]) -> str:
    import jax

    return jax.jit(f).lower(*args).as_text(dialect="hlo")


def _old_key(plan: dict[str, Any]) -> tuple:
    """The search's order before the cost model (python/exla/memory_limit/search.py)."""
    split = plan["split_size"] or plan["threshold"] // 4
    return (plan["recomputed_flops"], plan["loops"], -split, -plan["threshold"])


def plans_of(text: str) -> list[dict[str, Any]]:
    """The distinct modules exla makes of ``text`` under the search's settings:
    thresholds and slice sizes, each loop moved to each other dimension of
    its tensor (as the search's "other dimension" plans), and each value a
    loop computes again kept whole (its "kept whole" plans)."""
    from exla import _core
    from exla.memory_limit.model_plans import KEEP_WHOLE
    from exla._splitter_result import of_records
    from exla.options import Options

    largest = max(t.bytes for t in _core.tensor_sizes(text))
    seen: dict[str, dict[str, Any]] = {}

    def add(options: Options, dimensions: dict[str, int]) -> list:
        optimized = _core.optimize(text, options, dimensions=dimensions)
        out, records = optimized.text, optimized.passes
        loops = of_records(records).loops
        built = all(d == KEEP_WHOLE or any(loop.where == where and loop.dimension == d
                                           for loop in loops)
                    for where, d in dimensions.items())
        if out in seen or " while(" not in out or not built:
            return []
        seen[out] = {"threshold": options.threshold, "split_size": options.split_size,
                     "text": out, "loops": len(loops),
                     "dimensions": " ".join(f"{w}:{d}" for w, d in sorted(dimensions.items())),
                     "recomputed_flops": of_records(records).recomputed_flops}
        return loops

    for k in (2, 4, 8, 16, 32):
        threshold = largest // k
        for split in (None, threshold // 2, threshold):
            options = Options(threshold=threshold, split_size=split)
            loops = add(options, {})
            for loop in loops:
                for d, extent in enumerate(loop.extents):
                    if d != loop.dimension and extent >= 2:
                        add(options, {loop.where: d})
            if split is None:
                for value in sorted({f"{loop.computation}/{name}" for loop in loops
                                     for name in loop.recomputed}):
                    add(options, {value: KEEP_WHOLE})
    return list(seen.values())


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    def ranks(x: list[float]) -> np.ndarray:
        x = np.asarray(x)
        order = np.argsort(x, kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x), dtype=float)
        for value in np.unique(x):
            r[x == value] = r[x == value].mean()
        return r
    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def interleaved_seconds(texts: list[str], args: list[np.ndarray], repeats: int,
                        min_seconds: float = 0.05) -> list[list[float]]:
    """Samples of the wall time of one run of each module, taken in turns
    (plan 1, 2, ..., n, then again, starting one plan later each round), so
    that a change in the shared machine's load slows every plan alike."""
    from exla.bridge import xla as bridge

    runs = []
    for text in texts:
        executable = bridge.compile_cpu(text)
        buffers = executable.put(args)
        start = time.perf_counter()
        executable.run(buffers)  # warm-up: first-touch of the output, code caches
        inner = max(1, int(min_seconds / max(time.perf_counter() - start, 1e-7)))
        runs.append((executable, buffers, inner))
    samples: list[list[float]] = [[] for _ in texts]
    for round_ in range(repeats):
        for k in range(len(texts)):
            plan = (k + round_) % len(texts)
            executable, buffers, inner = runs[plan]
            start = time.perf_counter()
            for _ in range(inner):
                executable.run(buffers)
            samples[plan].append((time.perf_counter() - start) / inner)
    return samples


def median_interval(samples: list[float]) -> tuple[float, float]:
    """A distribution-free 95% confidence interval of the median of
    ``samples``: the order statistics between which a Binomial(n, 1/2) count
    falls with 95% probability (normal approximation; the whole range for
    fewer than 6 samples)."""
    ordered = sorted(samples)
    n = len(ordered)
    spread = 1.96 * math.sqrt(n)
    low = max(1, math.floor((n - spread) / 2))  # 1-based ranks
    high = min(n, math.ceil(1 + (n + spread) / 2))
    return ordered[low - 1], ordered[high - 1]


def measure_program(name: str, repeats: int,
                    constants: dict[str, float] | None = None) -> list[dict[str, Any]]:
    from exla import _core
    from exla.bridge import xla as bridge

    f, args = PROGRAMS[name]()
    text = _hlo(f, args)
    rows = plans_of(text)
    load_before = os.getloadavg()[0]
    measured = interleaved_seconds([plan["text"] for plan in rows], args, repeats)
    load = f"{load_before:.1f}/{os.getloadavg()[0]:.1f}"
    for plan, samples in zip(rows, measured):
        plan["predicted_s"] = _core.predict_time(plan["text"], constants).seconds
        plan["peak_bytes"] = bridge.planned_memory(plan["text"]).total_bytes
        plan["measured_s"] = statistics.median(samples)
        plan["measured_min_s"] = min(samples)
        plan["measured_lo_s"], plan["measured_hi_s"] = median_interval(samples)
        plan["program"] = name
        plan["repeats"] = repeats
        plan["load"] = load
        moved = f" ({plan['dimensions']})" if plan["dimensions"] else ""
        print(f"  {name}: threshold {plan['threshold']}, split {plan['split_size']}{moved}: "
              f"{plan['loops']} loops, peak {plan['peak_bytes'] / 1e6:.1f} MB, predicted "
              f"{plan['predicted_s'] * 1e3:.2f} ms, measured {plan['measured_s'] * 1e3:.2f} ms "
              f"(fastest {plan['measured_min_s'] * 1e3:.2f} ms)",
              flush=True)
    return rows


def cases(rows: list[dict[str, Any]], measured: str = "measured_s") -> list[dict[str, Any]]:
    """One case per distinct limit (each plan's peak) that admits two plans or
    more, judged by the plans' ``measured`` times (the median, or with
    ``measured_min_s`` the fastest sample)."""
    out = []
    for limit in sorted({r["peak_bytes"] for r in rows}):
        fitting = [r for r in rows if r["peak_bytes"] <= limit]
        if len(fitting) < 2 or any(c["plans"] == len(fitting) for c in out):
            continue
        fastest = min(r[measured] for r in fitting)
        model = min(fitting, key=lambda r: (r["predicted_s"], _old_key(r)))
        old = min(fitting, key=_old_key)
        clear = model if old["predicted_s"] > CLEAR * model["predicted_s"] else old
        out.append({"limit": limit, "plans": len(fitting),
                    **_judged_by_intervals(fitting, {"model": model, "old": old, "clear": clear}),
                    "model_fastest": model[measured] <= fastest * NEAR,
                    "model_exact": model[measured] == fastest,
                    "old_fastest": old[measured] <= fastest * NEAR,
                    "clear_fastest": clear[measured] <= fastest * NEAR,
                    "model_slowdown": model[measured] / fastest,
                    "old_slowdown": old[measured] / fastest,
                    "clear_slowdown": clear[measured] / fastest,
                    "disagree": model is not old,
                    "predicted_gain": old["predicted_s"] / model["predicted_s"],
                    "measured_gain": old[measured] / model[measured]})
    return out


def _judged_by_intervals(fitting: list[dict[str, Any]],
                         choices: dict[str, dict[str, Any]]) -> dict[str, bool]:
    """Whether the case is *separable* (some plan's median is measurably
    slower than the fastest plan's: the 95% intervals of the two medians do not
    overlap) and, for each ranking's choice, whether it is *not measurably
    slower* than the fastest plan. Empty without recorded intervals."""
    if not all("measured_lo_s" in r for r in fitting):
        return {}
    fastest = min(fitting, key=lambda r: r["measured_s"])
    slower = lambda r: r["measured_lo_s"] > fastest["measured_hi_s"]  # noqa: E731
    out = {"separable": any(slower(r) for r in fitting)}
    for name, chosen in choices.items():
        out[f"{name}_not_slower"] = not slower(chosen)
    return out


def _typed(row: dict[str, str]) -> dict[str, Any]:
    """A row of cost_rank.csv with its numbers as numbers."""
    out: dict[str, Any] = dict(row)
    for key in ("threshold", "loops", "recomputed_flops", "peak_bytes"):
        out[key] = int(row[key])
    out["split_size"] = int(row["split_size"]) if row.get("split_size") else None
    out["dimensions"] = row.get("dimensions") or ""
    for key in ("predicted_s", "measured_s"):
        out[key] = float(row[key])
    for key in ("measured_min_s", "measured_lo_s", "measured_hi_s"):
        if row.get(key):
            out[key] = float(row[key])
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The plans of a run recorded by ``--out``."""
    with open(path, newline="") as handle:
        return [_typed(r) for r in csv.DictReader(handle)]


def _calibration() -> str:
    """What cost_constants.h says of when and where it was calibrated (and
    which rates were measured again since)."""
    from experiments.tools.calibrate_cost import read_header

    try:
        *_, lines = read_header()
    except (OSError, StopIteration):
        return "not recorded"
    text = " ".join(lines).replace(" (shared machine: other jobs running).", ";").rstrip(";")
    text = re.sub(r"; ([A-Z])", lambda m: "; " + m[1].lower(), text)
    return text[len("Calibrated "):] if text.startswith("Calibrated ") else text


def cost_rank_section(results_dir: Path) -> list[str]:
    """The RESULTS.md section of ``cost_rank.csv``, if any."""
    path = results_dir / "cost_rank.csv"
    if not path.exists():
        return []
    rows = read_rows(path)
    if not rows:
        return []
    programs = list(dict.fromkeys(r["program"] for r in rows))
    return ["## cost_rank", "",
            f"`python -m experiments cost_rank --repeats {rows[0].get('repeats', '?')}`: "
            f"{len(programs)} JAX programs at reduced sizes (kernel matvec 3000 x 16, cross "
            "entropy value and gradients 512 x 128 x vocabulary 16,000, attention 2048 x 64, a "
            "wide MLP layer's gradient 1024 x 64 x 8192, kNN top-8 of 256 queries among 16,384 "
            "points), each rewritten at thresholds of 1/2 to 1/32 of its largest tensor and "
            "slices of 1/4, 1/2 and all of the threshold, with each loop moved to each other "
            "dimension of its tensor where the splitter can build it there, and (default "
            "slices) with each value a loop computes again kept whole; "
            "every distinct plan compiled and timed by XLA CPU (median of the samples, plans "
            "sampled in turns so that load changes affect all alike) and predicted by "
            "`exla.predict_time` with the constants of `cc/model/cost/cost_constants.h` "
            f"(calibrated {_calibration()}). A case is a program under a limit (the plans "
            "whose XLA peak fits, for each distinct peak that admits two plans or more). "
            "Target of issue 27: the fastest measured plan chosen in 9 of 10 cases.", "",
            *summary(rows), ""]


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """The figures of a run: rank correlations and how often each ranking
    chose the fastest plan."""
    programs = list(dict.fromkeys(r["program"] for r in rows))
    rhos: dict[str, float] = {}
    found: list[dict[str, Any]] = []
    by_min: list[dict[str, Any]] = []
    for name in programs:
        mine = [r for r in rows if r["program"] == name]
        rhos[name] = spearman([r["predicted_s"] for r in mine], [r["measured_s"] for r in mine])
        found += cases(mine)
        if all("measured_min_s" in r for r in mine):
            by_min += cases(mine, "measured_min_s")
    n = len(found)
    count = lambda key: sum(c[key] for c in found)  # noqa: E731
    worst = lambda key: max((c[key] for c in found), default=1.0)  # noqa: E731
    loads = ", ".join(f"{p} {next(r.get('load', '') for r in rows if r['program'] == p)}"
                      for p in programs)
    return ["- Spearman rank correlation, predicted against measured: "
            + ", ".join(f"{p} {rhos[p]:.2f}" for p in programs)
            + f" (mean {np.nanmean(list(rhos.values())):.2f}); {len(rows)} plans",
            _levels(rows, programs),
            f"- fastest measured plan chosen (within {100 * (NEAR - 1):.0f}%), of {n} cases: the "
            f"cost model {count('model_fastest')} ({count('model_exact')} exactly), the order "
            f"before it (least recomputation, fewest loops, largest slices) "
            f"{count('old_fastest')}, the model only where it predicts {CLEAR}x or more and the "
            f"old order otherwise {count('clear_fastest')}",
            f"- worst choice against the fastest: model {worst('model_slowdown'):.2f}x, old "
            f"order {worst('old_slowdown'):.2f}x, model where clear {worst('clear_slowdown'):.2f}x",
            _by_intervals(found),
            _by_fastest_sample(by_min),
            _disagreements(found),
            f"- 1-minute load average before/after each program (2 cores): {loads}"]


def _levels(rows: list[dict[str, Any]], programs: list[str]) -> str:
    """How far the predicted times are from the measured ones, not only in
    order: the median ratio per program, and the typical error over all."""
    ratio = {p: np.array([r["predicted_s"] / r["measured_s"] for r in rows if r["program"] == p])
             for p in programs}
    typical = np.exp(np.median(np.abs(np.log(np.concatenate(list(ratio.values()))))))
    return ("- predicted over measured time, median per program: "
            + ", ".join(f"{p} {np.median(ratio[p]):.2f}" for p in programs)
            + f"; a plan's prediction is typically off by {100 * (typical - 1):.0f}% "
            "(median of |log(predicted / measured)|)")


def _by_intervals(found: list[dict[str, Any]]) -> str:
    """The cases the machine can tell apart, judged by intervals of the
    medians rather than a fixed margin."""
    separable = [c for c in found if c.get("separable")]
    if not any("separable" in c for c in found):
        return "- (no intervals of the medians recorded)"
    count = lambda key: sum(c[key] for c in separable)  # noqa: E731
    return (f"- judged by 95% intervals of the medians: in {len(separable)} of {len(found)} "
            f"cases some plan is measurably slower than the fastest; of these, the choice is "
            f"not measurably slower than the fastest for the cost model in "
            f"{count('model_not_slower')}, the order before it in {count('old_not_slower')}, "
            f"the search's rule in {count('clear_not_slower')}")


def _by_fastest_sample(found: list[dict[str, Any]]) -> str:
    """The same cases judged by each plan's fastest sample, which other jobs on
    the machine can only slow: the plan's own speed, where the median also
    carries the load of the moment."""
    if not found:
        return "- (no fastest samples recorded)"
    count = lambda key: sum(c[key] for c in found)  # noqa: E731
    return (f"- judged by each plan's fastest sample instead of the median: the cost model "
            f"{count('model_fastest')} of {len(found)}, the order before it "
            f"{count('old_fastest')}, the model where clear {count('clear_fastest')}; worst "
            f"choice {max(c['model_slowdown'] for c in found):.2f}x")


def _disagreements(found: list[dict[str, Any]]) -> str:
    """What the model's predicted gains were worth where it chose otherwise
    than the old order: the evidence for the search's CLEAR_GAIN."""
    split = [c for c in found if c["disagree"]]
    if not split:
        return "- the model and the old order chose the same plan in every case"
    faster = sum(c["measured_gain"] > NEAR for c in split)
    slower = sum(c["measured_gain"] < 1 / NEAR for c in split)
    return (f"- where the model and the old order chose differently ({len(split)} cases), the "
            f"model predicted its plan {min(c['predicted_gain'] for c in split):.2f}x to "
            f"{max(c['predicted_gain'] for c in split):.2f}x faster; measured, it was faster in "
            f"{faster}, slower in {slower}, within {100 * (NEAR - 1):.0f}% in "
            f"{len(split) - faster - slower}")


def _plan_key(plan: dict[str, Any]) -> tuple:
    return plan["program"], plan["threshold"], plan["split_size"], plan["dimensions"]


def replay(path: Path, constants: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The plans of a run recorded by ``--out``, predicted again by the
    cost model as built now (with ``constants`` in place of calibrated ones),
    beside the times recorded then: a change to the model is judged in
    seconds, without timing the plans again. A plan the splitter no longer
    makes is left out (and counted)."""
    from exla import _core

    rows = read_rows(path)
    kept = []
    for name in dict.fromkeys(r["program"] for r in rows):
        texts = {_plan_key({**plan, "program": name}): plan["text"]
                 for plan in plans_of(_hlo(*PROGRAMS[name]()))}
        for row in (r for r in rows if r["program"] == name and _plan_key(r) in texts):
            row["predicted_s"] = _core.predict_time(texts[_plan_key(row)], constants).seconds
            kept.append(row)
    if len(kept) < len(rows):
        print(f"{len(rows) - len(kept)} recorded plans are no longer made; left out")
    return kept


def _constant(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    try:
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments cost_rank", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--programs", nargs="*", default=list(PROGRAMS))
    parser.add_argument("--out", type=Path, default=None, help="CSV of every plan")
    parser.add_argument("--replay", type=Path, default=None, metavar="CSV",
                        help="predict the plans of a recorded run again, without timing them")
    parser.add_argument("--set", type=_constant, action="append", default=[],
                        metavar="NAME=VALUE", help="a cost model constant in place of the "
                        "calibrated one (cc/model/cost/cost_constants.h names them)")
    args = parser.parse_args(argv)
    constants = dict(args.set)
    if args.replay:
        print("\n".join(summary(replay(args.replay, constants))))
        return 0
    load = os.getloadavg()
    all_rows = []
    for name in args.programs:
        rows = measure_program(name, args.repeats, constants)
        rho = spearman([r["predicted_s"] for r in rows], [r["measured_s"] for r in rows])
        found = cases(rows)
        print(f"{name}: {len(rows)} plans, Spearman {rho:.2f}; cases: model fastest "
              f"{sum(c['model_fastest'] for c in found)}/{len(found)}, before the model "
              f"{sum(c['old_fastest'] for c in found)}/{len(found)}, model where it predicts "
              f"{CLEAR}x {sum(c['clear_fastest'] for c in found)}/{len(found)}", flush=True)
        for r in rows:
            r["spearman"] = rho
        all_rows += rows
    print("\n".join(summary(all_rows)))
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fields = ["program", "threshold", "split_size", "dimensions", "loops", "recomputed_flops",
                  "peak_bytes", "predicted_s", "measured_s", "measured_min_s",
                  "measured_lo_s", "measured_hi_s", "spearman",
                  "repeats", "load"]
        with args.out.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fields, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(all_rows)
    return 0
