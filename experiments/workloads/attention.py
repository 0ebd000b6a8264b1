"""Causal attention, forward and backward, beside what a user would write instead.

    python -m experiments attention [--seqs 8192 16384 32768] [--time-up-to 8192]

The user's code is ``jax.nn.dot_product_attention(q, k, v, is_causal=True,
implementation="xla")``, loss ``sum(o * g)`` and its gradients in q, k and v,
1 x seq x 8 heads x 64, float32. Backends, each in this one process:

* ``plain``: ``jax.jit`` of that code (XLA holds heads x seq x seq scores:
  2.1 GB at seq = 8,192, 34 GB at 32,768);
* ``exla``: ``exla.jit`` of the same code with only ``memory_limit`` set
  (256MB at seq = 8,192, 512MB at 16,384, 1GB above): exla splits the softmax
  along the keys;
* ``blocked``: attention blocked by hand in JAX, the online softmax over key
  blocks inside a map over query blocks, each query block rematerialised in
  the backward pass (``jax.checkpoint``); every block is computed and masked
  (no skipping of the blocks above the diagonal), as a first version would;
* ``torch``: PyTorch's CPU ``scaled_dot_product_attention(is_causal=True)``
  and ``backward()``.

Per row: XLA's planned peak of the executable that ran (JAX backends; for
exla, whether it is exla's rewrite: ``ran_rewritten``), the median, min and
max time of ``--repeats`` calls after compiling, and the largest normwise
relative error of the loss and the three gradients against a float64 NumPy
reference (``error``; at seq above ``--reference-up-to`` none). Sizes above
``--time-up-to`` are compiled (planned peak) but not run: on a 2-core CPU
one evaluation at 32,768 takes many minutes. Rows go to
``experiments/results/attention.csv``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments import RESULTS_DIR

HEADS, HEAD_SIZE = 8, 64
LIMITS = {8192: "256MB", 16384: "512MB"}  # the issues' limits; 1GB above
DEFAULT_LIMIT = "1GB"
BLOCK = 512  # the hand-blocked version's query and key block
COLUMNS = ["run_id", "seq", "backend", "limit", "status", "ran_rewritten", "loops",
           "planned_peak_mb", "planned_temp_mb", "compile_s", "time_s", "time_min_s",
           "time_max_s", "repeats", "ratio_to_plain", "error", "load_avg", "commit", "note"]


def loss(q: Any, k: Any, v: Any, g: Any) -> Any:
    """The user's code: causal attention, reduced against a cotangent g."""
    import jax
    import jax.numpy as jnp

    o = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
    return jnp.sum(o * g)


def blocked_loss(q: Any, k: Any, v: Any, g: Any) -> Any:
    """The same loss with attention blocked by hand (online softmax over key blocks)."""
    import jax
    import jax.numpy as jnp

    seq = q.shape[1]
    blocks = seq // BLOCK
    scale = 1.0 / np.sqrt(q.shape[-1])
    kb = k.reshape(blocks, BLOCK, HEADS, HEAD_SIZE)
    vb = v.reshape(blocks, BLOCK, HEADS, HEAD_SIZE)

    @jax.checkpoint
    def query_block(args):
        qi, start = args  # BLOCK x heads x d, first query row
        rows = start + jnp.arange(BLOCK)

        def key_block(carry, j):
            m, l, acc = carry
            s = jnp.einsum("qhd,khd->hqk", qi, kb[j]) * scale
            s = jnp.where(rows[:, None] >= j * BLOCK + jnp.arange(BLOCK)[None, :], s, -jnp.inf)
            m_new = jnp.maximum(m, s.max(-1))
            p = jnp.exp(s - m_new[..., None])
            rescale = jnp.exp(m - m_new)
            acc = acc * rescale[..., None] + jnp.einsum("hqk,khd->hqd", p, vb[j])
            return (m_new, l * rescale + p.sum(-1), acc), None

        init = (jnp.full((HEADS, BLOCK), -jnp.inf), jnp.zeros((HEADS, BLOCK)),
                jnp.zeros((HEADS, BLOCK, HEAD_SIZE)))
        (m, l, acc), _ = jax.lax.scan(key_block, init, jnp.arange(blocks))
        return jnp.transpose(acc / l[..., None], (1, 0, 2))  # BLOCK x heads x d

    qb = q[0].reshape(blocks, BLOCK, HEADS, HEAD_SIZE)
    o = jax.lax.map(query_block, (qb, jnp.arange(blocks) * BLOCK)).reshape(q.shape)
    return jnp.sum(o * g)


def reference64(q, k, v, g) -> list[np.ndarray]:
    """Loss and gradients in float64 NumPy, one head at a time."""
    q, k, v, g = (np.asarray(a[0], np.float64) for a in (q, k, v, g))  # seq x heads x d
    seq = q.shape[0]
    scale = 1.0 / np.sqrt(HEAD_SIZE)
    total, grads = 0.0, [np.zeros_like(q) for _ in range(3)]
    upper = np.triu(np.ones((seq, seq), bool), 1)
    for h in range(HEADS):
        qh, kh, vh, gh = q[:, h], k[:, h], v[:, h], g[:, h]
        s = qh @ kh.T * scale
        s[upper] = -np.inf
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        total += np.sum((p @ vh) * gh)
        dp = gh @ vh.T
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
        grads[0][:, h], grads[1][:, h], grads[2][:, h] = ds @ kh, ds.T @ qh, p.T @ gh
        del s, p, dp, ds
    return [np.array(total)] + [a[None] for a in grads]


def error(results: list[Any], reference: list[np.ndarray] | None) -> float | None:
    """Largest normwise relative error of the results against the reference."""
    if reference is None:
        return None
    errors = []
    for a, r in zip(results, reference):
        a = np.asarray(a, np.float64).ravel()
        errors.append(float(np.linalg.norm(a - r.ravel()) / np.linalg.norm(r.ravel())))
    return max(errors)


def timed(call: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    """Times of ``repeats`` calls and the last call's result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return times, result


def jax_rows(seq: int, args: list[np.ndarray], repeats: int, run: bool,
             reference: list[np.ndarray] | None, limit: str) -> list[dict[str, Any]]:
    """The plain, exla and hand-blocked JAX rows for one sequence length."""
    import jax

    import exla
    from experiments.harness.executed import jax_executed

    value_and_grad = jax.value_and_grad(loss, argnums=(0, 1, 2))
    start = time.perf_counter()
    plain = jax.jit(value_and_grad).lower(*args).compile()
    plain_compile_s = time.perf_counter() - start
    programs = {
        "plain": (plain, None, {}),
        "exla": (None, exla.jit(value_and_grad, memory_limit=limit), {"limit": limit}),
        "blocked": (None, jax.jit(jax.value_and_grad(blocked_loss, argnums=(0, 1, 2))), {}),
    }
    rows = []
    for backend, (compiled, fn, fields) in programs.items():
        start = time.perf_counter()
        compiled = compiled or fn.lower(*args).compile()
        compile_s = plain_compile_s if backend == "plain" else time.perf_counter() - start
        row = {"seq": seq, "backend": backend, "compile_s": compile_s, **fields}
        row.update(jax_executed(compiled, plain if backend == "exla" else None))
        fits = row["planned_peak_mb"] * 2**20 < 0.6 * _memory_bytes()
        if run and fits:
            times, (value, grads) = timed(lambda: jax.block_until_ready(compiled(*args)), repeats)
            row.update(_times(times), error=error([value, *grads], reference))
        row["status"] = _status(backend, row, run, fits, exla.parse_size(limit))
        rows.append(row)
    return rows


def torch_row(seq: int, args: list[np.ndarray], repeats: int,
              reference: list[np.ndarray] | None) -> dict[str, Any]:
    """PyTorch's CPU scaled_dot_product_attention, forward and backward; where torch
    cannot be imported (the "peers" extra is not installed), a row that says so."""
    try:
        import torch
    except ImportError as e:
        return {"seq": seq, "backend": "torch", "status": "not installed", "note": str(e)}

    q, k, v = (torch.tensor(np.swapaxes(a, 1, 2), requires_grad=True) for a in args[:3])
    g = torch.tensor(np.swapaxes(args[3], 1, 2))

    def call():
        for t in (q, k, v):
            t.grad = None
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        value = (o * g).sum()
        value.backward()
        return [value.detach().numpy()] + [np.swapaxes(t.grad.numpy(), 1, 2) for t in (q, k, v)]

    times, results = timed(call, repeats)
    return {"seq": seq, "backend": "torch", "status": "ok", **_times(times),
            "error": error(results, reference),
            "note": f"torch {torch.__version__}, {torch.get_num_threads()} threads"}


def _times(times: list[float]) -> dict[str, Any]:
    return {"time_s": statistics.median(times), "time_min_s": min(times),
            "time_max_s": max(times), "repeats": len(times)}


def _status(backend: str, row: dict[str, Any], run: bool, fits: bool, limit: int) -> str:
    if backend == "exla" and row.get("ran_rewritten") != "yes":
        # exla leaves a program alone that already meets the limit.
        return "unchanged" if row["planned_peak_mb"] * 2**20 <= limit else "fallback"
    if not fits:
        return "too large for this machine (planned peak)"
    return "ok" if run else "compiled only"


def _memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments attention",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seqs", type=int, nargs="+", default=[8192, 16384, 32768])
    parser.add_argument("--time-up-to", type=int, default=8192, help="run only up to this seq")
    parser.add_argument("--reference-up-to", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--limit", help=f"exla's memory limit at every seq (default: "
                        f"{LIMITS} and {DEFAULT_LIMIT} above)")
    parser.add_argument("--backends", nargs="+", default=["jax", "torch"], choices=["jax", "torch"])
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    from experiments.harness.machine import machine_info
    from experiments.harness.runner import append_rows

    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    commit = machine_info().get("commit", "")
    for seq in args.seqs:
        rng = np.random.default_rng(seq)
        inputs = [rng.normal(size=(1, seq, HEADS, HEAD_SIZE)).astype(np.float32) for _ in range(4)]
        run = seq <= args.time_up_to
        reference = reference64(*inputs) if run and seq <= args.reference_up_to else None
        limit = args.limit or LIMITS.get(seq, DEFAULT_LIMIT)
        rows = (jax_rows(seq, inputs, args.repeats, run, reference, limit)
                if "jax" in args.backends else [])
        if run and "torch" in args.backends:
            rows.append(torch_row(seq, inputs, args.repeats, reference))
        plain = next((r for r in rows if r["backend"] == "plain" and "time_s" in r), None)
        for row in rows:
            if plain is not None and "time_s" in row:
                row["ratio_to_plain"] = row["time_s"] / plain["time_s"]
            row.update(run_id=run_id, commit=commit, load_avg=f"{os.getloadavg()[0]:.1f}")
            print(", ".join(f"{c}={row[c]:.4g}" if isinstance(row.get(c), float) else f"{c}={row[c]}"
                            for c in COLUMNS if row.get(c) is not None), flush=True)
        append_rows(args.results_dir / "attention.csv", rows, COLUMNS)
    return 0


def attention_section(results_dir: Path) -> list[str]:
    """The RESULTS.md table of ``attention.csv``: the newest row per seq, backend and limit."""
    from experiments.harness.runner import read_rows
    from experiments.harness.tables import number as _num

    rows = read_rows(results_dir / "attention.csv")
    if not rows:
        return []
    newest = {(int(r["seq"]), r["backend"], r.get("limit", "")): r for r in rows}
    head = ["seq", "backend", "limit", "status", "exla's program ran", "loops",
            "planned peak (MiB)", "planned temp (MiB)", "time (s) [min-max]", "vs plain XLA",
            "rel. error vs float64", "load", "run"]
    out = ["## attention", "", (__doc__ or "").strip().splitlines()[0], "",
           "`python -m experiments attention`: 1 x seq x 8 heads x 64, f32, loss and gradients "
           "in q, k, v; planned figures are XLA's buffer assignment of the JAX executable that "
           "ran (none for PyTorch); error: largest normwise relative error of the four results "
           "against float64.", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (seq, backend, limit), r in sorted(newest.items()):
        time_cell = (f"{_num(r.get('time_s'))} [{_num(r.get('time_min_s'))}-"
                     f"{_num(r.get('time_max_s'))}]" if r.get("time_s") else "")
        out.append("| " + " | ".join([
            f"{seq:,}", backend, limit, r["status"], _ran_cell(r), r.get("loops", ""),
            _num(r.get("planned_peak_mb")), _num(r.get("planned_temp_mb")), time_cell,
            _num(r.get("ratio_to_plain")), _num(r.get("error")), r.get("load_avg", ""),
            r.get("run_id", "")]) + " |")
    return out + [""]


def _ran_cell(row: dict[str, str]) -> str:
    """Whether exla's program ran; a row only compiled says what was compiled."""
    ran = row.get("ran_rewritten", "")
    if ran and row["status"] != "ok":
        return f"not run (compiled: {'exla' if ran == 'yes' else 'plain'}'s program)"
    return ran


def _summary_cell(row: dict[str, str] | None, run_id: str) -> str:
    """A backend's time (or why none) and XLA's planned peak, for the README; the run's
    date where it is not ``run_id``'s."""
    from experiments.harness.headline import binary_size
    from experiments.harness.tables import number as _num

    if row is None:
        return "—"
    planned = (f"{binary_size(row['planned_peak_mb'])} planned" if row.get("planned_peak_mb")
               else "")
    if row["status"] != "ok" or not row.get("time_s"):
        return f"{planned}: {row['status']}" if planned else row["status"]
    other_run = row.get("run_id", "") != run_id
    ratio = (f" ({float(row['ratio_to_plain']):.2f}×" + (" in its run" if other_run else "") + ")"
             if row.get("ratio_to_plain") and row["backend"] != "plain" else "")
    when = f"run of {row['run_id'][:4]}-{row['run_id'][4:6]}-{row['run_id'][6:8]}"
    return ", ".join(x for x in [f"{_num(row['time_s'])} s{ratio}", planned,
                                 when if other_run else ""] if x)


def attention_summary(results_dir: Path) -> list[str]:
    """The README's attention table: per seq and exla limit, each backend's time and plan.

    Times are medians of one run's calls (ratios to plain ``jax.jit`` of the
    same run); sizes in MiB (2**20 bytes).
    """
    from experiments.harness.runner import read_rows

    newest = {(int(r["seq"]), r["backend"], r.get("limit", "")): r
              for r in read_rows(results_dir / "attention.csv")}
    lines = ["| seq (exla's limit) | plain `jax.jit` | exla | hand-blocked JAX | PyTorch SDPA |",
             "|---|---|---|---|---|"]
    for seq, backend, limit in sorted(k for k in newest if k[1] == "exla"):
        peers = [next((r for (s, b, _), r in newest.items() if s == seq and b == name), None)
                 for name in ("plain", "blocked", "torch")]
        exla = newest[(seq, backend, limit)]
        cells = [_summary_cell(row, exla.get("run_id", "")) for row in (peers[0], exla, *peers[1:])]
        lines.append("| " + " | ".join([f"{seq:,} ({limit})", *cells]) + " |")
    return lines
