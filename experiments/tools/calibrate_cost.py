"""Calibrates exla's cost model (cc/model/cost/cost_model.cc) on this machine.

    python -m experiments calibrate_cost [--write] [--repeats 7] [--only PART] [--check]

Each constant of ``cc/model/cost/cost_constants.h`` is measured by one small HLO
program compiled and run by XLA's CPU backend (jaxlib, through
:func:`exla.bridge.xla.compile_cpu`), timed as the median of ``--repeats`` runs
after a warm-up:

* ``dot_f32`` / ``dot_f64``: a 1024 x 1024 by 1024 x 1024 product: 2.1 GFLOP
  over a few MB, so the arithmetic decides;
* ``dot_shapes``: thin f32 products, each with one side (rows, depth or
  columns) of 8 to 512 and the other two 1,024, beside the 1,024-cube. XLA
  CPU's GEMM runs a thin product far below its full rate; the model's
  efficiency ``(narrowest side / dot_thin_width) ** dot_thin_exponent``
  below the width (the cube's side) is fitted to their rates relative to the
  cube's, by least squares on the logarithms, one power for all three
  orientations;
* ``elementwise``: 16 rounds of ``y = y * a + b`` over 1M f32 values, fused
  into one loop that reads 4 MB and does 32M operations;
* ``transcendental``: ``y + exp(c1 y) + ... + exp(c8 y)`` over 1M f32
  values, one fused loop of 8 independent exponentials per element; the
  multiplies and adds are taken off at the elementwise rate. (A chain of
  dependent ones, ``y = exp(-y)`` 8 times, measured half the rate: each
  element waits for its previous exponential, while the exponentials of
  real programs, ``exp(-d)``, ``tanh(x W)``, are independent.)
* ``bandwidth``: ``a + b`` over 16M f32 values: 192 MB read and written
  (fresh output pages included, as every program's temporaries are);
* ``cache``: the last-level cache. Its size is read from
  ``/sys/devices/system/cpu/cpu0/cache`` (the highest level); ``a + b`` is run
  over working sets (three arrays) of 1/8 to 4 times that size. The cache's
  bandwidth is the stream's at 1/4 of the size (above the private levels,
  well inside the shared one); the effective capacity, ``cache_bytes``, is the
  largest working set still streamed faster than the geometric mean of the
  cache's and memory's bandwidths (a cache shared with other cores' jobs holds
  less than its nominal size), at most the nominal size;
* ``sort``: 1,024 rows of 1,024 (f32 key, s32 index) pairs sorted along the
  rows with a comparator (a total order on the keys, ties by index), as the
  splitter's top-k merge sorts candidates: ``sort_comparisons_per_second`` is
  n log2 n comparisons per row over the time;
* ``topk``: a top-8 of 256 rows of 65,536 f32 values (XLA CPU's own
  selection, not a sort): ``topk_elements_per_second`` is the elements read
  over the time;
* ``update_scan``: a loop of 16 trips, each writing a 512 x 1,000 block of
  columns into a 512 x 16,000 f32 array in place (``dynamic-update-slice``
  at a column offset). XLA CPU visits every element of the rows such an
  update touches, checking whether each lies inside it, so a trip costs the
  array's rows, not the block: ``update_scan_elements_per_second`` is the
  elements visited outside the blocks over the time;
* ``copy_dot_<shape>`` / ``plain_dot_<shape>``: a product whose operand
  XLA CPU copies into a transposed buffer, as it does for a dot operand not
  in its GEMM's order (cc/model/fusion/dot_operand_copies.h), and the same
  product with the operand stored in that order; operands of shapes that
  differ in their rows and row length (``COPY_SHAPES``). Whether a copy's
  lines stay cached depends on the rows one pass of it reads and the bytes
  it spans (cc/model/cost/transpose_walk.h), against the L2 and L1 data
  caches read from ``/sys/devices/system/cpu/cpu0/cache``
  (``transpose_cache_bytes``, ``transpose_lines_cache_bytes``). Each rate is
  the copies' bytes read and written over the differences of the two times,
  summed over the copies the cost model says stay cached and over those it
  says miss (a plain ``transpose`` of the same arrays ran 1.3-2.5x faster
  than the copy: the product's copy is what the model charges);
* ``loop_1`` ... ``loop_8``: a while loop of 20,000 trips that adds one to
  a scalar and does 1, 2, 4 or 8 small dependent matrix products, each a
  kernel of its own. A line through the time per trip against the products
  per trip (least squares, :func:`fit_loop`) gives both overheads: its
  slope is the launch of one kernel (``op_seconds``), its intercept what a
  trip costs without any (``trip_seconds``). (A loop that did no kernel's
  work would be compiled by XLA into one loop of machine code, so the trip
  cannot be timed alone.) An intercept that is not positive is refused with
  the figures, not written: the trip is then below what the loop resolves
  on this machine now (an earlier version took the 1-product loop's time
  less one launch, which came out negative, and wrote 0).

``--only selection`` measures the sort and top-k rates alone and keeps the
header's other constants (``--only thin`` the thin products' efficiency,
``--only transcendental`` the exponential's rate, ``--only trip`` the trip
overhead, the launch overhead kept, ``--only transpose`` the transposes): a
full calibration on a shared machine moves every rate by up to 2x between
runs, so a rate added later is measured alone.

``--check`` measures a few rates again (DRIFT_BENCHMARKS: a large product,
the elementwise chain, the stream, the top-k; seconds) and fails when one is
more than MAX_DRIFT times above or below the header's: the header belongs to
another machine, or this one is loaded (calibrations on this shared machine
have moved rates by up to 2x; a 2x drift is past that).

With ``--write`` the constants are written to ``cc/model/cost/cost_constants.h``
with the date, the machine and its load average (the machine is shared: a
loaded machine measures slow rates). Rebuild the extension afterwards.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import os
import platform
import re
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments import REPO_ROOT

HEADER = REPO_ROOT / "cc" / "model" / "cost" / "cost_constants.h"

_N = 1024           # dot side
_ELEMENTS = 1 << 20  # compute-bound elementwise programs
_STREAM = 1 << 24    # the memory-bound add
_TRIPS = 20_000
_OPS_PER_TRIP = (1, 2, 4, 8)


def median_seconds(text: str, args: list[np.ndarray], repeats: int = 7,
                   min_seconds: float = 0.05) -> float:
    """Median wall time of one run of ``text`` on ``args`` (inputs already on the
    device), after a warm-up; a fast program is run several times per sample
    so that a sample lasts at least ``min_seconds``."""
    from exla.bridge import xla as bridge

    executable = bridge.compile_cpu(text)
    buffers = executable.put(args)
    start = time.perf_counter()
    executable.run(buffers)  # warm-up: first-touch of the output, code caches
    once = time.perf_counter() - start
    inner = max(1, int(min_seconds / max(once, 1e-7)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            executable.run(buffers)
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def _dot(dtype: str) -> str:
    return f"""HloModule dot_{dtype}

ENTRY e {{
  a = {dtype}[{_N},{_N}]{{1,0}} parameter(0)
  b = {dtype}[{_N},{_N}]{{1,0}} parameter(1)
  ROOT d = {dtype}[{_N},{_N}]{{1,0}} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


_THIN_SIDES = (8, 16, 32, 64, 128, 256, 512)


def _dot_shape(rows: int, depth: int, columns: int) -> str:
    return f"""HloModule dot_shape

ENTRY e {{
  a = f32[{rows},{depth}]{{1,0}} parameter(0)
  b = f32[{depth},{columns}]{{1,0}} parameter(1)
  ROOT d = f32[{rows},{columns}]{{1,0}} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


def thin_shapes() -> list[tuple[int, int, int]]:
    """(rows, depth, columns) of the thin products: one side thin, two of _N."""
    out = []
    for side in _THIN_SIDES:
        out += [(side, _N, _N), (_N, side, _N), (_N, _N, side)]
    return out


def fit_thin(rates: dict[tuple[int, int, int], float], full: float) -> dict[str, float]:
    """``dot_thin_width`` and ``dot_thin_exponent`` fitted to measured rates
    (flops per second by (rows, depth, columns)) relative to ``full``, the
    cube's: the width is the cube's side (a product no thinner than the cube
    runs at its rate), and the exponent minimises the squared error of
    log(rate / full) against exponent * log(narrowest side / width).
    (Fitting the width as well was unstable: two runs chose 1,024 and 256;
    an exponent per side ranked cost_rank's plans no better.)"""
    sides = np.array([min(shape) for shape in rates], dtype=float)
    x = np.log(np.minimum(1.0, sides / _N))
    y = np.log(np.array(list(rates.values())) / full)
    exponent = float(np.dot(x, y) / np.dot(x, x)) if np.any(x) else 0.0
    return {"dot_thin_width": float(_N), "dot_thin_exponent": max(0.0, exponent)}


def measure_thin(repeats: int, full: float,
                 seconds: dict[str, float]) -> dict[str, float]:
    """The thin-product constants, the products' times added to ``seconds``."""
    rng = np.random.default_rng(3)
    rates = {}
    for rows, depth, columns in thin_shapes():
        a = rng.standard_normal((rows, depth)).astype(np.float32)
        b = rng.standard_normal((depth, columns)).astype(np.float32)
        took = median_seconds(_dot_shape(rows, depth, columns), [a, b], repeats)
        seconds[f"dot_{rows}x{depth}x{columns}"] = took
        rates[(rows, depth, columns)] = 2.0 * rows * depth * columns / took
    return fit_thin(rates, full)


def measure_transcendental(repeats: int, elementwise: float,
                           seconds: dict[str, float]) -> dict[str, float]:
    """The exponential's rate, the elementwise work around it taken off at
    ``elementwise`` operations per second; its time added to ``seconds``."""
    y = np.random.default_rng(5).uniform(0, 1, _ELEMENTS).astype(np.float32)
    seconds["transcendental"] = took = median_seconds(_chain(8, _add_exp), [y], repeats)
    around = 16.0 * _ELEMENTS / elementwise  # a multiply and an add per exponential
    return {"transcendental_per_second": 8.0 * _ELEMENTS / max(took - around, 1e-9)}


def _transcendental_alone(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    seconds: dict[str, float] = {}
    elementwise = read_header()[0]["elementwise_per_second"]
    return measure_transcendental(repeats, elementwise, seconds), seconds


def measure_thin_alone(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """The thin-product constants with the cube they are relative to measured
    in the same run (the header's full rate is kept)."""
    a = np.random.default_rng(0).standard_normal((_N, _N)).astype(np.float32)
    cube = f"dot_{_N}x{_N}x{_N}"
    seconds = {cube: median_seconds(_dot("f32"), [a, a], repeats)}
    constants = measure_thin(repeats, 2.0 * _N ** 3 / seconds[cube], seconds)
    return constants, seconds


def _chain(rounds: int, step: Callable[[str, int], list[str]]) -> str:
    """A chain of ``rounds`` elementwise steps over f32[_ELEMENTS], one fusion."""
    shape = f"f32[{_ELEMENTS}]{{0}}"
    lines = [f"  y0 = {shape} parameter(0)",
             "  ca = f32[] constant(0.999)", "  cb = f32[] constant(0.001)",
             f"  a = {shape} broadcast(ca), dimensions={{}}",
             f"  b = {shape} broadcast(cb), dimensions={{}}"]
    for k in range(rounds):
        lines += step(shape, k)
    lines[-1] = lines[-1].replace(f"  y{rounds} =", f"  ROOT y{rounds} =")
    return "HloModule chain\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def _multiply_add(shape: str, k: int) -> list[str]:
    return [f"  m{k} = {shape} multiply(y{k}, a)", f"  y{k + 1} = {shape} add(m{k}, b)"]


def _add_exp(shape: str, k: int) -> list[str]:
    """``y{k+1} = y{k} + exp(c_k y0)``: an exponential independent of the others."""
    return [f"  c{k} = f32[] constant({0.5 + 0.01 * k})",
            f"  b{k} = {shape} broadcast(c{k}), dimensions={{}}",
            f"  m{k} = {shape} multiply(y0, b{k})", f"  e{k} = {shape} exponential(m{k})",
            f"  y{k + 1} = {shape} add(y{k}, e{k})"]


def _stream(elements: int = _STREAM) -> str:
    shape = f"f32[{elements}]{{0}}"
    return (f"HloModule stream\n\nENTRY e {{\n  a = {shape} parameter(0)\n  b = {shape} parameter(1)\n"
            f"  ROOT s = {shape} add(a, b)\n}}\n")


def _condition(state: str, trips: int) -> str:
    """The condition computation ``cond`` of a loop whose state ``state``
    starts with its trip counter: ``trips`` trips."""
    return (f"cond {{\n  state = {state} parameter(0)\n"
            "  i = s32[] get-tuple-element(state), index=0\n"
            f"  n = s32[] constant({trips})\n"
            "  ROOT lt = pred[] compare(i, n), direction=LT\n}")


def _loop(ops: int) -> str:
    """A while loop of _TRIPS trips that adds one to a scalar; each trip also
    does ``ops`` dependent 8 x 8 products. (A loop that only counted would be
    removed by XLA's simplifier.)"""
    m = "f32[8,8]{1,0}"
    state = f"(s32[], f32[], {m})"
    body = [f"  state = {state} parameter(0)",
            "  i = s32[] get-tuple-element(state), index=0",
            "  s = f32[] get-tuple-element(state), index=1",
            f"  x0 = {m} get-tuple-element(state), index=2"]
    for k in range(ops):
        body.append(f"  x{k + 1} = {m} dot(x{k}, x{k}), lhs_contracting_dims={{1}}, "
                    "rhs_contracting_dims={0}")
    body += ["  one = s32[] constant(1)", "  next = s32[] add(i, one)",
             "  unit = f32[] constant(1)", "  sum = f32[] add(s, unit)",
             f"  ROOT t = {state} tuple(next, sum, x{ops})"]
    return f"""HloModule loop_{ops}

body {{
{chr(10).join(body)}
}}

{_condition(state, _TRIPS)}

ENTRY e {{
  x = {m} parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  init = {state} tuple(zero, z, x)
  loop = {state} while(init), condition=cond, body=body
  s = f32[] get-tuple-element(loop), index=1
  r = {m} get-tuple-element(loop), index=2
  ROOT out = (f32[], {m}) tuple(s, r)
}}
"""


_SCAN_ROWS, _SCAN_COLUMNS, _SCAN_TRIPS = 512, 16000, 16


def _update_scan() -> str:
    """A loop that writes column blocks of an array in place: the update's
    offset is along the minor dimension."""
    width = _SCAN_COLUMNS // _SCAN_TRIPS
    array, block = f"f32[{_SCAN_ROWS},{_SCAN_COLUMNS}]{{1,0}}", f"f32[{_SCAN_ROWS},{width}]{{1,0}}"
    state = f"(s32[], {array}, {array})"
    return f"""HloModule update_scan

body {{
  state = {state} parameter(0)
  i = s32[] get-tuple-element(state), index=0
  into = {array} get-tuple-element(state), index=1
  from = {array} get-tuple-element(state), index=2
  width = s32[] constant({width})
  column = s32[] multiply(i, width)
  zero = s32[] constant(0)
  columns = {block} dynamic-slice(from, zero, column), dynamic_slice_sizes={{{_SCAN_ROWS},{width}}}
  written = {array} dynamic-update-slice(into, columns, zero, column)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = {state} tuple(next, written, from)
}}

{_condition(state, _SCAN_TRIPS)}

ENTRY e {{
  from = {array} parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  into = {array} broadcast(z), dimensions={{}}
  init = {state} tuple(zero, into, from)
  loop = {state} while(init), condition=cond, body=body
  ROOT r = {array} get-tuple-element(loop), index=1
}}
"""


_SORT_ROWS, _SORT_N = 1024, 1024
_TOPK_ROWS, _TOPK_N, _TOPK_K = 256, 65536, 8


def _sort() -> str:
    """(key, index) pairs sorted along the rows, ties by index."""
    keys, index = f"f32[{_SORT_ROWS},{_SORT_N}]{{1,0}}", f"s32[{_SORT_ROWS},{_SORT_N}]{{1,0}}"
    return f"""HloModule sort

order {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  less = pred[] compare(a, b), direction=LT, type=TOTALORDER
  equal = pred[] compare(a, b), direction=EQ, type=TOTALORDER
  before = pred[] compare(i, j), direction=LT
  tie = pred[] and(equal, before)
  ROOT first = pred[] or(less, tie)
}}

ENTRY e {{
  x = {keys} parameter(0)
  n = {index} iota(), iota_dimension=1
  ROOT s = ({keys}, {index}) sort(x, n), dimensions={{1}}, to_apply=order
}}
"""


def _topk() -> str:
    shape = f"f32[{_TOPK_ROWS},{_TOPK_N}]{{1,0}}"
    out = f"(f32[{_TOPK_ROWS},{_TOPK_K}]{{1,0}}, s32[{_TOPK_ROWS},{_TOPK_K}]{{1,0}})"
    return (f"HloModule topk\n\nENTRY e {{\n  x = {shape} parameter(0)\n"
            f"  ROOT t = {out} topk(x), k={_TOPK_K}, largest=true\n}}\n")


def _cache_sizes() -> dict[int, int]:
    """The bytes of each data (or unified) cache level cpu0 sees, from sysfs."""
    sizes = {}
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level = int((index / "level").read_text())
            if (index / "type").read_text().strip() == "Instruction":
                continue
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        sizes[level] = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    return sizes


def llc_bytes() -> int:
    """The size of the highest cache level cpu0 sees, from sysfs (32 MB if unreadable)."""
    sizes = _cache_sizes()
    return sizes[max(sizes)] if sizes else 32 << 20


def l2_bytes() -> int:
    """The size of cpu0's L2 cache (sysfs index2), where a strided walk stops
    hitting (2 MB if unreadable)."""
    return _cache_sizes().get(2, 2 << 20)


def l1_bytes() -> int:
    """The size of cpu0's L1 data cache (sysfs index0), where the lines of
    the rows a transpose walks stay between passes (48 KB if unreadable)."""
    return _cache_sizes().get(1, 48 << 10)


# The operands copied (cc/model/cost/transpose_walk.h), f32 stored as
# [batch..., rows, a, b] and contracted over their rows: rows of 1,024
# elements (256 of them: half the L2; 4,096: far above it, each pass
# reading 32 elements of each row 4 KB apart); 8 blocks of 8,192 thin rows
# (attention's probability slices: each pass spans one 1 MB block); 64 long
# rows and 8,192 or 1,024 medium ones (16 MB each). Whether a copy stays
# cached is the cost model's own verdict (copy_stays_cached).
COPY_SHAPES = ((256, 32, 32), (8, 8192, 2, 16), (64, 256, 256),
               (4096, 32, 32), (8192, 16, 32), (1024, 64, 64))


def _shape_name(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _copy_dot(shape: tuple[int, ...], transposed: bool) -> str:
    """A product of the operand ``shape`` ([batch..., rows, a, b]) contracted
    over its rows with f32[batch..., rows, 64]. Stored rows before a and b
    (``transposed``), the operand is not in the order XLA CPU's GEMM takes
    (free dimensions, then contracting ones: two free ones cannot be read
    transposed), so XLA copies it; stored rows last, it is read as it is."""
    *batch, rows, a, b = shape
    stored = [*batch, rows, a, b] if transposed else [*batch, a, b, rows]
    contracting = len(batch) if transposed else len(batch) + 2
    batch_dims = ",".join(map(str, range(len(batch))))
    dims = (f"lhs_batch_dims={{{batch_dims}}}, rhs_batch_dims={{{batch_dims}}}, " if batch else "")
    rhs = ",".join(map(str, [*batch, rows, 64]))
    out = ",".join(map(str, [*batch, a, b, 64]))
    return f"""HloModule copy_dot

ENTRY e {{
  a = f32[{",".join(map(str, stored))}] parameter(0)
  b = f32[{rhs}] parameter(1)
  ROOT d = f32[{out}] dot(a, b), {dims}lhs_contracting_dims={{{contracting}}}, rhs_contracting_dims={{{len(batch)}}}
}}
"""


def copy_stays_cached(shape: tuple[int, ...], cache_bytes: float, lines_cache_bytes: float) -> bool:
    """The cost model's verdict on the copy of the operand ``shape``: whether
    its lines stay cached (an L2 of ``cache_bytes``, an L1 of
    ``lines_cache_bytes``). Asked of the model itself, by pricing the copy
    at 1e18 bytes a second if it stays cached and at 1 if it misses."""
    from exla import _core

    constants = {"transpose_cache_bytes": cache_bytes, "transpose_lines_cache_bytes": lines_cache_bytes,
                 "transpose_cached_bytes_per_second": 1e18, "transpose_bytes_per_second": 1.0}
    extra = (_core.predict_time(_copy_dot(shape, True), constants).seconds
             - _core.predict_time(_copy_dot(shape, False), constants).seconds)
    return extra < 1.0


def transpose_rates(seconds: dict[str, float], cache_bytes: float,
                    lines_cache_bytes: float) -> dict[str, float]:
    """The transpose constants from the times in ``seconds`` of the products
    with a copied operand (``copy_dot_<shape>``) and without
    (``plain_dot_<shape>``): the copies' bytes read and written over the
    differences summed, over the copies that stay cached (copy_stays_cached)
    and over those that miss.

    Raises:
      CalibrationError: a product with the copy ran no slower than without.
    """
    moved = {True: 0.0, False: 0.0}
    took = {True: 0.0, False: 0.0}
    for shape in COPY_SHAPES:
        name = _shape_name(shape)
        copied, plain = seconds[f"copy_dot_{name}"], seconds[f"plain_dot_{name}"]
        if copied <= plain:
            raise CalibrationError(
                f"the copy of a {name} operand is not resolved now: the product took "
                f"{copied * 1e3:.3f} ms with it, {plain * 1e3:.3f} ms without; measure again on a "
                "quieter machine (--only transpose)")
        cached = copy_stays_cached(shape, cache_bytes, lines_cache_bytes)
        moved[cached] += 2.0 * 4 * math.prod(shape)
        took[cached] += copied - plain
    return {"transpose_cache_bytes": float(cache_bytes),
            "transpose_lines_cache_bytes": float(lines_cache_bytes),
            "transpose_cached_bytes_per_second": moved[True] / took[True],
            "transpose_bytes_per_second": moved[False] / took[False]}


def measure_transpose(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """The transpose constants and the products' times (COPY_SHAPES)."""
    rng = np.random.default_rng(7)
    seconds = {}
    for shape in COPY_SHAPES:
        *batch, rows, a, b = shape
        rhs = rng.standard_normal((*batch, rows, 64)).astype(np.float32)
        for kind, transposed in (("copy", True), ("plain", False)):
            stored = (*batch, rows, a, b) if transposed else (*batch, a, b, rows)
            lhs = rng.standard_normal(stored).astype(np.float32)
            seconds[f"{kind}_dot_{_shape_name(shape)}"] = median_seconds(
                _copy_dot(shape, transposed), [lhs, rhs], repeats)
    return transpose_rates(seconds, l2_bytes(), l1_bytes()), seconds


def measure_cache(repeats: int, memory_bandwidth: float,
                  seconds: dict[str, float]) -> dict[str, float]:
    """``cache_bytes`` and ``cache_bytes_per_second`` from ``a + b`` over working
    sets of 1/8 to 4 times the last-level cache (three arrays of f32)."""
    nominal = llc_bytes()
    rng = np.random.default_rng(1)
    bandwidth: dict[int, float] = {}
    for eighths in (1, 2, 4, 8, 16, 32):
        working_set = nominal * eighths // 8
        elements = working_set // 12
        a = rng.standard_normal(elements).astype(np.float32)
        took = median_seconds(_stream(elements), [a, a], repeats)
        seconds[f"cache_ws_{working_set >> 20}MB"] = took
        bandwidth[working_set] = 12 * elements / took
    cache_bandwidth = bandwidth[nominal // 4]
    midpoint = (cache_bandwidth * memory_bandwidth) ** 0.5
    fast = [ws for ws, bw in bandwidth.items() if bw >= midpoint and ws <= nominal]
    return {"cache_bytes": float(max(fast, default=nominal // 8)),
            "cache_bytes_per_second": cache_bandwidth}


@dataclasses.dataclass(frozen=True)
class _Direct:
    """A benchmark whose constant is its work over its time."""

    constant: str  # the CostConstants field it measures
    work: float  # operations (or bytes) one run does
    program: Callable[[], str]
    inputs: Callable[[np.random.Generator], list[np.ndarray]]


def _pair(shape: tuple[int, ...], dtype: type) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def draw(rng: np.random.Generator) -> list[np.ndarray]:
        a = rng.standard_normal(shape).astype(dtype)
        return [a, a]
    return draw


DIRECT: dict[str, _Direct] = {
    "dot_f32": _Direct("dot_f32_flops_per_second", 2.0 * _N ** 3, lambda: _dot("f32"),
                       _pair((_N, _N), np.float32)),
    "dot_f64": _Direct("dot_f64_flops_per_second", 2.0 * _N ** 3, lambda: _dot("f64"),
                       _pair((_N, _N), np.float64)),
    "elementwise": _Direct("elementwise_per_second", 32.0 * _ELEMENTS,
                           lambda: _chain(16, _multiply_add),
                           lambda rng: [rng.uniform(0, 1, _ELEMENTS).astype(np.float32)]),
    "bandwidth": _Direct("bytes_per_second", 3.0 * 4 * _STREAM, _stream,
                         _pair((_STREAM,), np.float32)),
    "update_scan": _Direct(
        "update_scan_elements_per_second",
        _SCAN_TRIPS * _SCAN_ROWS * (_SCAN_COLUMNS - _SCAN_COLUMNS // _SCAN_TRIPS), _update_scan,
        lambda rng: [rng.standard_normal((_SCAN_ROWS, _SCAN_COLUMNS)).astype(np.float32)]),
    "sort": _Direct("sort_comparisons_per_second", _SORT_ROWS * _SORT_N * math.log2(_SORT_N),
                    _sort, lambda rng: [rng.standard_normal((_SORT_ROWS, _SORT_N))
                                        .astype(np.float32)]),
    "topk": _Direct("topk_elements_per_second", float(_TOPK_ROWS * _TOPK_N), _topk,
                    lambda rng: [rng.standard_normal((_TOPK_ROWS, _TOPK_N)).astype(np.float32)]),
}
"""The benchmarks whose constant is the work of one run over its median time."""


def direct_rates(seconds: dict[str, float]) -> dict[str, float]:
    """The constants of the DIRECT benchmarks timed in ``seconds``."""
    return {DIRECT[name].constant: DIRECT[name].work / took
            for name, took in seconds.items() if name in DIRECT}


def measure_direct(names: list[str], repeats: int,
                   seconds: dict[str, float]) -> dict[str, float]:
    """Times the DIRECT benchmarks ``names`` (added to ``seconds``); their constants."""
    rng = np.random.default_rng(0)
    timed = {name: median_seconds(DIRECT[name].program(), DIRECT[name].inputs(rng), repeats)
             for name in names}
    seconds.update(timed)
    return direct_rates(timed)


def measure(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """``(constants, seconds per benchmark)``, constants named as CostConstants' fields."""
    seconds: dict[str, float] = {}
    constants = measure_direct(["dot_f32", "dot_f64", "elementwise", "bandwidth", "update_scan"],
                               repeats, seconds)
    constants.update(measure_loop(repeats, seconds))
    constants.update(measure_transcendental(repeats, constants["elementwise_per_second"],
                                            seconds))
    constants.update(measure_thin(repeats, constants["dot_f32_flops_per_second"], seconds))
    constants.update(measure_cache(repeats, constants["bytes_per_second"], seconds))
    selection, selection_seconds = measure_selection(repeats)
    constants.update(selection)
    seconds.update(selection_seconds)
    transpose, transpose_seconds = measure_transpose(repeats)
    constants.update(transpose)
    seconds.update(transpose_seconds)
    return constants, seconds


class CalibrationError(RuntimeError):
    """A benchmark's figures do not determine the constant they measure."""


def fit_loop(per_trip: dict[int, float]) -> dict[str, float]:
    """``op_seconds`` and ``trip_seconds`` from the seconds a loop's trip
    takes with each number of kernels in it: the slope and the intercept of
    the least-squares line. (The products' own arithmetic, 1 kFLOP each, is
    nothing beside a launch.)

    Raises:
      CalibrationError: the slope or the intercept is not positive.
    """
    kernels = np.array(list(per_trip), dtype=float)
    seconds = np.array(list(per_trip.values()))
    slope, intercept = np.polyfit(kernels, seconds, 1)
    said = ", ".join(f"{k}: {s * 1e6:.3f} us" for k, s in per_trip.items())
    if slope <= 0 or intercept <= 0:
        raise CalibrationError(
            f"the loop benchmark does not resolve the trip overhead now: a trip takes {said} "
            f"by kernels in it, a line through them {slope * 1e6:.3f} us a kernel and "
            f"{intercept * 1e6:.3f} us a trip without any; measure again on a quieter "
            "machine (--only trip)")
    return {"op_seconds": float(slope), "trip_seconds": float(intercept)}


def measure_loop(repeats: int, seconds: dict[str, float]) -> dict[str, float]:
    """The launch and trip overheads; the loops' times added to ``seconds``."""
    x = (np.eye(8) * 0.5).astype(np.float32)
    per_trip = {}
    for ops in _OPS_PER_TRIP:
        seconds[f"loop_{ops}"] = took = median_seconds(_loop(ops), [x], repeats)
        per_trip[ops] = took / _TRIPS
    return fit_loop(per_trip)


def _trip_alone(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    seconds: dict[str, float] = {}
    return {"trip_seconds": measure_loop(repeats, seconds)["trip_seconds"]}, seconds


def measure_selection(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """The sort and top-k rates, which depend on no other benchmark."""
    seconds: dict[str, float] = {}
    return measure_direct(["sort", "topk"], repeats, seconds), seconds


DRIFT_BENCHMARKS = ("dot_f32", "elementwise", "bandwidth", "topk")
"""What ``--check`` measures again: a few seconds, one rate of each kind of work."""

MAX_DRIFT = 2.0
"""``--check`` fails when a rate measured now is this many times above or below the header's."""


def drift(repeats: int = 3) -> dict[str, tuple[float, float]]:
    """``{constant: (the header's, measured now)}`` for DRIFT_BENCHMARKS."""
    header = read_header()[0]
    measured = measure_direct(list(DRIFT_BENCHMARKS), repeats, {})
    return {name: (header[name], value) for name, value in measured.items()}


def drifted(rates: dict[str, tuple[float, float]]) -> list[str]:
    """The rates of ``drift()`` that moved by more than MAX_DRIFT either way, said."""
    return [f"{name}: {now:.4g} now against {then:.4g} in the header ({now / then:.2f}x)"
            for name, (then, now) in rates.items()
            if not 1 / MAX_DRIFT <= now / then <= MAX_DRIFT]


# What --only can measure alone: the function, and how the header says so.
_PARTS: dict[str, tuple[Callable[[int], tuple[dict[str, float], dict[str, float]]], str]] = {
    "selection": (measure_selection, "The sort and top-k rates measured again"),
    "thin": (measure_thin_alone, "Thin products measured again"),
    "transcendental": (_transcendental_alone,
                       "Exponentials measured again"),
    "trip": (_trip_alone, "The loop trip measured again"),
    "transpose": (measure_transpose, "Transposes measured"),
}

# The header's benchmark times a part replaces whole (its benchmarks' names
# may change between calibrations).
_REPLACED = {"transpose": ("copy_dot_", "plain_dot_")}


def read_header() -> tuple[dict[str, float], dict[str, float], list[str]]:
    """The constants, benchmark times and provenance lines the header holds now."""
    text = HEADER.read_text()
    constants = {m[1]: float(m[2]) for m in re.finditer(r"double (\w+) = ([-+.\deE]+);", text)}
    seconds = {m[1]: float(m[2]) / 1e3
               for m in re.finditer(r"^//   (\w+)\s+([.\d]+) ms$", text, re.MULTILINE)}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("// Calibrated"))
    end = next(i for i, line in enumerate(lines) if line.startswith("// Median times"))
    return constants, seconds, [line[3:] for line in lines[start:end]]


_COMMENTS = {
    "dot_f32_flops_per_second": "a large f32 matrix product (Eigen's GEMM)",
    "dot_f64_flops_per_second": "the same in f64",
    "dot_thin_width": "a product's narrowest side (rows, depth, columns) at full rate",
    "dot_thin_exponent": "below it the rate falls as (narrowest side / width)^exponent",
    "elementwise_per_second": "cheap elementwise results (add, multiply, select)",
    "transcendental_per_second": "exp, log, tanh... results",
    "bytes_per_second": "a stream through memory, read plus write",
    "sort_comparisons_per_second": "a sort's comparisons (n log2 n a row, comparator calls)",
    "topk_elements_per_second": "elements a top-k selects from",
    "op_seconds": "launching one kernel (a fused loop, a GEMM call)",
    "trip_seconds": "one trip of a while loop: condition, state",
    "update_scan_elements_per_second": "elements an in-place update visits outside its block",
    "cache_bytes": "what a stream finds in the last-level cache (effective size)",
    "cache_bytes_per_second": "a stream through the last-level cache, read plus write",
    "transpose_cache_bytes": "the L2 cache: a transpose spanning more than half of it misses",
    "transpose_lines_cache_bytes": "the L1 data cache: unless the lines of the rows it walks fit half of it",
    "transpose_cached_bytes_per_second": "a transpose whose lines stay cached, read plus write",
    "transpose_bytes_per_second": "a transpose that misses, read plus write",
}


def machine() -> dict[str, Any]:
    """What the constants were measured on."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from exla.bridge import xla as bridge

    return {"date": datetime.date.today().isoformat(), "cpu": cpu, "cores": os.cpu_count(),
            "load": os.getloadavg(), "jaxlib": bridge._xla().version, "llc": llc_bytes()}


def provenance(where: dict[str, Any], what: str = "Calibrated") -> list[str]:
    """The header's lines saying when, where and under what load ``what`` was measured."""
    load = ", ".join(f"{x:.2f}" for x in where["load"])
    return [f"{what} {where['date']} on {where['cpu']}, {where['cores']} cores, jaxlib",
            f"{where['jaxlib']}, last-level cache {where['llc'] >> 20} MB (sysfs), load average",
            f"{load} (shared machine: other jobs running)."]


def without_part(lines: list[str], what: str) -> list[str]:
    """The provenance ``lines`` without the block of an earlier ``what`` (each
    block is :func:`provenance`'s three lines): a part measured again is said once.

    >>> without_part(["Calibrated a", "b", "c", "Exps measured x", "y", "z", "Tops d", "e", "f"],
    ...              "Exps measured")
    ['Calibrated a', 'b', 'c', 'Tops d', 'e', 'f']
    """
    block = len(provenance({"load": (), "date": "", "cpu": "", "cores": 0, "jaxlib": "", "llc": 0}))
    kept, skip = [], 0
    for line in lines:
        if skip == 0 and line.startswith(what + " "):
            skip = block
        if skip:
            skip -= 1
            continue
        kept.append(line)
    return kept


def _number(name: str, value: float) -> str:
    """Constant ``name``'s ``value`` as the header writes it: four digits, a
    size in bytes in full (a 2 MB array must not come out above a 2 MB cache)."""
    return str(round(value)) if name.endswith("_bytes") else f"{value:.4g}"


def header_text(constants: dict[str, float], seconds: dict[str, float],
                lines: list[str]) -> str:
    """cost_constants.h with ``constants``, and how and when they were measured."""
    said = "\n".join(f"// {line}" for line in lines)
    measured = "\n".join(f"//   {name:<18} {value * 1e3:9.3f} ms" for name, value in seconds.items())
    fields = "\n".join(f"  double {name} = {_number(name, value)};  // {_COMMENTS[name]}"
                       for name, value in constants.items())
    return f"""// The cost model's constants (model/cost/cost_model.cc): how fast this machine's
// XLA CPU runs each kind of work. GENERATED by `python -m experiments
// calibrate_cost --write` from microbenchmarks; edit that script, not this
// file.
//
{said}
// Median times of the benchmarks:
{measured}
#ifndef EXLA_MODEL_COST_COST_CONSTANTS_H_
#define EXLA_MODEL_COST_COST_CONSTANTS_H_

namespace exla {{

// Rates in operations (or bytes) per second, overheads in seconds.
struct CostConstants {{
{fields}
}};

}}  // namespace exla

#endif  // EXLA_MODEL_COST_COST_CONSTANTS_H_
"""


def _check(repeats: int) -> int:
    rates = drift(min(repeats, 3))
    for name, (then, now) in rates.items():
        print(f"{name:<26} header {then:.4g}, now {now:.4g} ({now / then:.2f}x)")
    moved = drifted(rates)
    print(f"load average {os.getloadavg()}")
    if moved:
        print("drifted by more than {MAX_DRIFT:g}x (recalibrate, or the machine is loaded):\n  "
              .format(MAX_DRIFT=MAX_DRIFT) + "\n  ".join(moved))
        return 1
    print(f"no rate moved by more than {MAX_DRIFT:g}x")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments calibrate_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--write", action="store_true", help=f"write {HEADER.relative_to(REPO_ROOT)}")
    parser.add_argument("--only", choices=sorted(_PARTS),
                        help="measure only these rates and keep the header's others (on a "
                             "loaded machine every rate moves: this changes a few)")
    parser.add_argument("--check", action="store_true",
                        help=f"measure {', '.join(DRIFT_BENCHMARKS)} again (seconds) and fail "
                             f"when a rate moved by more than {MAX_DRIFT:g}x from the header's")
    args = parser.parse_args(argv)
    if args.check:
        return _check(args.repeats)
    where = machine()
    try:
        if args.only:
            constants, seconds, lines = read_header()
            measure_part, said = _PARTS[args.only]
            measured, measured_seconds = measure_part(args.repeats)
            constants.update(measured)
            seconds = {name: value for name, value in seconds.items()
                       if not name.startswith(_REPLACED.get(args.only, ()))}
            seconds.update(measured_seconds)
        else:
            constants, seconds = measure(args.repeats)
    except CalibrationError as e:
        print(f"not calibrated: {e}")
        return 1
    where["load"] = tuple((a + b) / 2 for a, b in zip(where["load"], os.getloadavg()))
    lines = without_part(lines, said) + provenance(where, said) if args.only else provenance(where)
    for name, value in seconds.items():
        print(f"{name:<18} {value * 1e3:9.3f} ms")
    for name, value in constants.items():
        print(f"{name:<26} {value:.4g}")
    print(f"load average {where['load']}")
    if args.write:
        HEADER.write_text(header_text(constants, seconds, lines))
        print(f"wrote {HEADER}; rebuild the extension")
    return 0
