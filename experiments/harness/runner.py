"""Parent side of the harness: one child process per configuration, under a memory cap.

Every configuration runs in ``python -m experiments.harness.child``, inside its
own memory cgroup (exla's own :class:`exla.memory_cap.Cgroup`, joined before
the child starts). The parent waits with ``os.wait4`` (so it gets the child's
peak RSS even when the kernel killed it; the kernel carries the high-water mark
across ``exec``, so this stays light itself: no TensorFlow here), classifies the outcome (``ok``,
``OOM``, ``TIMEOUT``, ``error``) and appends one CSV row per configuration to
``<results>/<experiment>.csv``, next to ``<experiment>.machine.json``.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from experiments import REPO_ROOT, RESULTS_DIR, exla_source_paths, prefer_checkout_exla
from experiments.harness.machine import machine_info

__all__ = ["COMMON_COLUMNS", "run_configs", "append_rows", "read_rows"]

_log = logging.getLogger("exla")

COMMON_COLUMNS = [
    "run_id", "experiment", "backend", "exla_path", "limit", "limit_kind", "split_size", "cap_gb",
    "status", "time_s", "first_call_s", "repeats", "peak_rss_mb", "base_rss_mb", "cgroup_peak_mb",
    "planned_temp_mb", "planned_temp_plain_mb", "planned_peak_mb", "error", "exla_plan", "load_avg", "note",
    # What ran (experiments.harness.executed): the figures above come from the
    # executable that ran when planned_from is "executable".
    "ran_rewritten", "exla_rewrote", "loops", "loops_plain", "planned_from", "planned_peak_plain_mb",
    "search_peak_mb", "time_min_s", "time_max_s", "program", "executed_module", "commit",
]


def read_rows(path: Path) -> list[dict[str, str]]:
    """All rows of a results CSV (empty when it does not exist)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def append_rows(path: Path, rows: Iterable[dict[str, Any]], columns: Sequence[str]) -> None:
    """Appends rows, writing the header first for a new file.

    An old file keeps its columns in their order; columns it lacks are added
    at the end (the file is rewritten once, its old rows left empty there).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    header = list(columns)
    if path.exists() and path.stat().st_size > 0:
        with open(path, newline="") as f:
            header = next(csv.reader(f))
        missing = [c for c in columns if c not in header]
        if missing:
            old_rows = read_rows(path)
            header += missing
            with open(path, "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=header)
                writer.writeheader()
                writer.writerows(old_rows)
        new_file = False
    else:
        new_file = True
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        if new_file:
            writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(v) for k, v in row.items()})


def _fmt(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def _wait(pid: int, timeout_s: float) -> tuple[int, Any, bool]:
    """Waits for ``pid``; kills it after ``timeout_s``. Returns (status, rusage, timed_out)."""
    deadline = time.monotonic() + timeout_s
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            return status, usage, timed_out
        if not timed_out and time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            timed_out = True
        time.sleep(0.05)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()
             and not ln.startswith(("I0000", "W0000", "E0000", "WARNING"))]
    for ln in reversed(lines):
        if "Error" in ln or "Exception" in ln or ln.startswith("F0000"):
            return ln[:300]
    return lines[-1][:300] if lines else ""


_OOM_WORDS = ("ResourceExhausted", "bad_alloc", "Out of memory", "out of memory", "MemoryError",
              "OOM when allocating")


def run_one(module: str, config: dict[str, Any], cap_bytes: int, timeout_s: float,
            extra_env: dict[str, str], framework: str = "tf") -> dict[str, Any]:
    """Runs one configuration in a capped child; returns the measured row.

    ``framework``: ``tf`` (the child's TensorFlow XLA dumps what it compiles,
    and the row's loops and planned memory are read from the dump of the
    program it timed) or ``jax`` (the child records them itself).
    """
    cgroup = _memory_cap().make_cgroup(cap_bytes)
    if cgroup is None:
        _log.warning("no memory cgroup available; the child runs WITHOUT a memory cap")
    load_start = os.getloadavg()[0]
    try:
        row = _run_child(module, config, cgroup, timeout_s, extra_env, framework)
        # The machine is shared: how busy it was says how far a time can be trusted.
        row["load_avg"] = f"{load_start:.1f}/{os.getloadavg()[0]:.1f}"
        return row
    finally:
        if cgroup is not None:
            cgroup.remove()


def _memory_cap():
    # Imported late: the parent then needs exla's Python sources on the path,
    # not the compiled extension (importing the package does not load it).
    prefer_checkout_exla()
    from exla import memory_cap
    return memory_cap


def _run_child(module: str, config: dict[str, Any], cgroup: Any, timeout_s: float,
               extra_env: dict[str, str], framework: str = "tf") -> dict[str, Any]:
    from experiments.harness import executed

    with tempfile.TemporaryDirectory(prefix="exla_exp_") as tmp:
        result_path = Path(tmp) / "result.json"
        log_path = Path(tmp) / "stderr.txt"
        dump_dir = Path(tmp) / executed.DUMP_DIR_NAME
        env = dict(os.environ)
        env.update(extra_env)
        if framework == "tf":
            env["XLA_FLAGS"] = " ".join([f for f in [env.get("XLA_FLAGS", "")] if f]
                                        + executed.dump_flags(dump_dir))
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT)] + exla_source_paths() + [p for p in [env.get("PYTHONPATH")] if p])
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "experiments.harness.child", module, json.dumps(config),
                 str(result_path)],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO_ROOT),
                preexec_fn=cgroup.add_self if cgroup is not None else None)
            status, usage, timed_out = _wait(proc.pid, timeout_s)
            proc.returncode = os.waitstatus_to_exitcode(status)
        row: dict[str, Any] = dict(config)
        if result_path.exists():
            try:
                row.update(json.loads(result_path.read_text()))
            except json.JSONDecodeError:
                pass
        log_text = log_path.read_text(errors="replace")
        if framework == "tf" and row.get("program"):
            row.update(executed.tf_executed(dump_dir, str(row["program"]),
                                            exla=config.get("backend") == "exla"))
    row["peak_rss_mb"] = usage.ru_maxrss / 1024.0
    peak = cgroup.peak_bytes() if cgroup is not None else None
    row["cgroup_peak_mb"] = peak / 2**20 if peak is not None else ""
    killed = proc.returncode == -signal.SIGKILL
    if timed_out:
        row["status"] = "TIMEOUT"
    elif killed and (cgroup is None or cgroup.oom_killed()):
        row["status"] = "OOM"
    elif proc.returncode != 0:
        row["status"] = "OOM" if any(w in log_text for w in _OOM_WORDS) else "error"
        row["note"] = _last_line(log_text)
    elif row.get("status") is None:
        row["status"] = "error"
        row["note"] = "child wrote no result"
    _judge_rewrite(row)
    return row


def _judge_rewrite(row: dict[str, Any]) -> None:
    """An exla row whose executable is not exla's program is not an exla result.

    ``fallback``: exla's report says it rewrote the program (or exla warned
    that it fell back), but the executable that ran is the original. A row
    where exla chose to change nothing keeps ``ok`` with ``ran_rewritten=no``:
    it measures plain XLA, and the report says so.
    """
    if row.get("backend") != "exla" or row.get("status") != "ok":
        return
    if row.get("ran_rewritten") == "no" and row.get("exla_rewrote") == "yes":
        row["status"] = "fallback"
        row["note"] = ("exla's report says it rewrote the program, "
                       "but the executable that ran is the original")


def _cap_mechanism(cap_bytes: int) -> str:
    """How children are capped here: "cgroup v1", "cgroup v2" or "none"."""
    cgroup = _memory_cap().make_cgroup(cap_bytes)
    if cgroup is None:
        return "none"
    cgroup.remove()
    return cgroup.mechanism


def run_configs(experiment: str, module: str, configs: Sequence[dict[str, Any]],
                columns: Sequence[str], *, cap_bytes: int, timeout_s: float,
                results_dir: Path = RESULTS_DIR, size_key: str = "n",
                env_for: Any = None, fill_error: Any = None,
                framework: str = "tf") -> list[dict[str, Any]]:
    """Runs every configuration (sorted by size) and appends the rows.

    Once a series (backend, limit and other parameters) runs out of memory or
    time at some size, its larger sizes are skipped (they would fail the same
    way, slowly).
    ``env_for(config)`` gives extra environment entries for a child (XLA_FLAGS);
    ``fill_error(row, earlier_rows)`` may compute the error from other backends' rows.
    """
    from tqdm import tqdm

    results_dir.mkdir(parents=True, exist_ok=True)
    csv_path = results_dir / f"{experiment}.csv"
    info = machine_info()
    info["cap_gb"] = cap_bytes / 2**30
    info["memory_cap"] = _cap_mechanism(cap_bytes)
    (results_dir / f"{experiment}.machine.json").write_text(json.dumps(info, indent=2) + "\n")
    run_id = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    failed: dict[tuple, Any] = {}
    rows = []
    bar = tqdm(sorted(configs, key=lambda c: float(c.get(size_key, 0))), desc=experiment,
               unit="cfg", dynamic_ncols=True)
    for config in bar:
        # The series: everything but the size (e.g. backend, limit, metric, d).
        key = tuple(sorted((k, str(v)) for k, v in config.items() if k not in (size_key, "repeats")))
        bar.set_postfix_str(f"{config.get('backend')} {size_key}={config.get(size_key)} "
                            f"limit={config.get('limit') or '-'}")
        if key in failed and float(config.get(size_key, 0)) > failed[key]:
            continue
        row = run_one(module, config, cap_bytes, timeout_s, env_for(config) if env_for else {},
                      framework)
        row.update(run_id=run_id, experiment=experiment, cap_gb=cap_bytes / 2**30,
                   commit=info.get("commit", ""))
        if fill_error is not None:
            fill_error(row, rows)
        if row["status"] in ("OOM", "TIMEOUT"):
            failed[key] = float(config.get(size_key, 0))
        append_rows(csv_path, [row], list(COMMON_COLUMNS) + [c for c in columns
                                                             if c not in COMMON_COLUMNS])
        rows.append(row)
        tqdm.write(f"  {row.get('backend'):>12} {size_key}={config.get(size_key)} "
                   f"limit={config.get('limit') or '-'}: {row['status']} "
                   f"t={row.get('time_s', '')} rss={row['peak_rss_mb']:.0f}MB")
    return rows
