"""The program-level memory limit (``memory_limit=``, ``--xla_memory_limit``, ``--memory-limit``).

Every "fits" is measured with XLA's own CPU buffer assignment, and every
rewritten program is run against the unrewritten one.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

from tests._frameworks import require

import exla
from tests.python._accuracy import assert_as_close_to, cross_entropy64
from exla.options import Options, resolve_options

pytestmark = pytest.mark.usefixtures("extension")

# exp(X Xᵀ) feeds a sort whose result is the program's output: nothing can be
# split, so no limit below two n x n buffers can be met.
SORTED_TEMPLATE = """HloModule sorted_{n}

less {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}}

ENTRY sorted_{n} {{
  x = f32[{n},8] parameter(0)
  k = f32[{n},{n}] dot(x, x), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
  e = f32[{n},{n}] exponential(k)
  ROOT s = f32[{n},{n}] sort(e), dimensions={{1}}, to_apply=less
}}
"""


def _peak(text: str) -> int:
    from exla.bridge import xla as bridge

    return bridge.planned_memory(text).total_bytes


def _run(text: str, args: list) -> list[np.ndarray]:
    from exla.bridge.tensorflow_call import call_hlo

    return [t.numpy() for t in call_hlo(text, args)]


def test_kernel_matvec_fits_and_computes_the_same(kmv_hlo):
    text = kmv_hlo(2000)  # a 16 MB kernel matrix
    assert _peak(text) > 16_000_000
    optimised, report = exla.optimize_hlo(text, memory_limit="4MB")
    assert report.within_memory_limit
    assert report.planned_peak_bytes == _peak(optimised) <= 4_000_000
    plan = report.limit_plan
    assert plan.chosen.fits and plan.chosen.loops >= 1
    # exla's models judged the plans; XLA compiled the winner once to confirm it.
    assert plan.model_plans >= 2 and plan.xla_compiles == 1 and len(plan.candidates) == 1
    assert plan.before_predicted and plan.chosen.predicted_peak_bytes is not None
    # One loop over the rows of the kernel, which nothing else needs whole.
    assert any(s.startswith("kmv_2000/k f32[2000,2000] (16.0 MB) on dimension 0 of extent 2000")
               and s.endswith("nothing recomputed") for s in plan.split), plan.split
    assert plan.chosen.recomputed_flops == 0 and "extra work" not in str(report)
    # The default quarter of the threshold fits with room to spare, so larger
    # slices were tried too; the cost model chose among the plans that fit.
    default = [c for c in plan.model_candidates if c.threshold == plan.chosen.threshold
               and c.split_size is None]
    assert default and default[0].fits
    assert any(c.fits and c.split_size == c.threshold for c in plan.model_candidates)
    fastest = min(c.predicted_seconds for c in plan.model_candidates if c.fits)
    assert plan.chosen.predicted_seconds == fastest, plan.summary()
    assert "memory limit 4 MB" in str(report) and "plan chosen" in str(report)
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(2000, 8)).astype(np.float32) * 0.1,
            rng.normal(size=(2000, 1)).astype(np.float32)]
    (expected,), (actual,) = _run(text, args), _run(optimised, args)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


# Row and column sums of a kernel both flow back into it: the two sums share a
# loop that computes the kernel again while it stays for its other user (as
# the C++ test NotesCountTheWorkSinkLoopsRepeat shows at 64 points).
NORMALISED_KERNEL = """HloModule normalised

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY normalised {
  x = f32[1024,4] parameter(0)
  y = f32[1024,4] parameter(1)
  bx = f32[1024,1024,4] broadcast(x), dimensions={0,2}
  by = f32[1024,1024,4] broadcast(y), dimensions={1,2}
  d = f32[1024,1024,4] subtract(bx, by)
  sq = f32[1024,1024,4] multiply(d, d)
  zero = f32[] constant(0)
  s = f32[1024,1024] reduce(sq, zero), dimensions={2}, to_apply=sum
  k = f32[1024,1024] exponential(s)
  rows = f32[1024] reduce(k, zero), dimensions={1}, to_apply=sum
  cols = f32[1024] reduce(k, zero), dimensions={0}, to_apply=sum
  brows = f32[1024,1024] broadcast(rows), dimensions={0}
  bcols = f32[1024,1024] broadcast(cols), dimensions={1}
  w = f32[1024,1024] multiply(k, brows)
  z = f32[1024,1024] multiply(w, bcols)
  ROOT total = f32[] reduce(z, zero), dimensions={0,1}, to_apply=sum
}
"""


def test_report_counts_the_work_loops_repeat():
    optimised, report = exla.optimize_hlo(NORMALISED_KERNEL, memory_limit="2MB")
    assert report.within_memory_limit
    assert report.planned_peak_bytes == _peak(optimised) <= 2_000_000
    plan = report.limit_plan
    # The kernel k (exp of a sum of 4 squared differences per entry: 3 x 4 +
    # 1 flops per element of the 1024 x 1024 kernel) is computed once more.
    per_kernel = (3 * 4 + 1) * 1024 * 1024
    assert plan.chosen.recomputed_flops == per_kernel
    assert plan.program_flops == per_kernel + 5 * 1024 * 1024
    assert "extra work: 13.6 MFLOP recomputed (72.2% of the program's 18.9 MFLOP)" in str(report)
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(1024, 4)).astype(np.float32) / 8 for _ in range(2)]
    np.testing.assert_allclose(_run(optimised, args)[0], _run(NORMALISED_KERNEL, args)[0],
                               rtol=1e-5)


def test_met_limit_is_not_split_further(kmv_hlo):
    text = kmv_hlo(500)  # 1 MB kernel: fits 100MB as it is
    optimised, report = exla.optimize_hlo(text, memory_limit="100MB")
    assert report.within_memory_limit and " while(" not in optimised
    assert len(report.limit_plan.candidates) == 1


def test_attention_function_fits(caplog):
    require("tensorflow")
    import tensorflow as tf

    def attention(q, k, v):
        scores = tf.matmul(q, k, transpose_b=True) / 8.0  # 1024 x 1024: 4 MB
        return tf.matmul(tf.nn.softmax(scores, axis=-1), v)

    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(1024, 64)).astype(np.float32) for _ in range(3))
    explanation = exla.explain(attention, q, k, v, memory_limit="2MB")
    assert explanation.rewritten and explanation.within_memory_limit
    assert _peak(explanation.hlo_after) <= 2_000_000 < _peak(explanation.hlo_before)
    expected = _run(explanation.hlo_before, [q, k, v])
    actual = _run(explanation.hlo_after, [q, k, v])
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-4, atol=1e-5)
    f = exla.function(attention, memory_limit="2MB", strict=True)
    np.testing.assert_allclose(f(q, k, v).numpy(), expected[0], rtol=1e-4, atol=1e-5)
    assert f.programs[0].rewritten and f.programs[0].runs == 1  # exla's program ran


def test_cross_entropy_writes_its_weight_gradient_under_the_limit():
    # Logits 64 x 5,000 (1.28 MB); the weight gradient (320 KB) is a program
    # output, above every threshold that fits: it must exist anyway, the
    # logits need not. Under 1 MB the classes are split (a loop over rows
    # would read all of W per slice): one loop for the softmax's statistics,
    # one that writes the gradient's columns, computing the logits again.
    require("tensorflow")
    from experiments.workloads.memory_limit import cross_entropy

    xent, (h, w, labels) = cross_entropy(batch=64, width=16, vocab=5000)
    explanation = exla.explain(xent, h, w, labels, memory_limit="1MB")
    plan = explanation.limit_plan
    assert explanation.within_memory_limit
    assert _peak(explanation.hlo_after) <= 1_000_000 < _peak(explanation.hlo_before)
    assert plan.chosen.threshold < 320_000  # the gradient is above the threshold
    assert all(" on dimension 1 of extent 5000:" in s for s in plan.split), plan.split
    assert plan.chosen.recomputed_flops == 2 * 64 * 16 * 5000  # the logits, once
    expected = _run(explanation.hlo_before, [h, w, labels])
    actual = _run(explanation.hlo_after, [h, w, labels])
    reference = cross_entropy64(h, w, labels)
    assert_as_close_to(reference, actual, expected)


def test_limit_that_cannot_be_met_warns_once_naming_the_instruction(caplog):
    text = SORTED_TEMPLATE.format(n=1000)  # 4 MB matrices, output 4 MB
    with caplog.at_level(logging.WARNING, logger="exla"):
        _, report = exla.optimize_hlo(text, memory_limit="6MB", strict=False)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "cannot fit the program in memory limit 6 MB" in warnings[0]
    assert "(sort)" in warnings[0] and "f32[1000,1000]" in warnings[0]
    assert "smallest planned peak reached is" in warnings[0]
    # One line per instruction, each with every dimension's reason.
    assert ("sorted_1000/e (exponential) f32[1000,1000] 4.0 MB: dimension 0: s is the "
            "computation's result and too large to split; dimension 1: s (sort) cannot consume "
            "slices along dimension 1") in warnings[0].splitlines()[2]
    assert report.within_memory_limit is False
    with pytest.raises(exla.ExlaError, match=r"sorted_1000/\w+ \(sort\)"):
        exla.optimize_hlo(text, memory_limit="6MB", strict=True)


TWO_SORTS = """HloModule two_sorts

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

ENTRY two_sorts {
  y = f32[700,8] parameter(1)
  small = f32[700,700] dot(y, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  es = f32[700,700] exponential(small)
  ss = f32[700,700] sort(es), dimensions={1}, to_apply=less
  x = f32[1000,8] parameter(0)
  big = f32[1000,1000] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  eb = f32[1000,1000] exponential(big)
  sb = f32[1000,1000] sort(eb), dimensions={1}, to_apply=less
  ROOT t = (f32[700,700], f32[1000,1000]) tuple(ss, sb)
}
"""


def test_limit_that_cannot_be_met_names_the_largest_first(caplog):
    # The 2 MB sort comes first in the program and in the splitter's records;
    # the warning lists the 4 MB tensors of the other sort before its own,
    # and states the floor no plan can go below.
    with caplog.at_level(logging.WARNING, logger="exla"):
        _, report = exla.optimize_hlo(TWO_SORTS, memory_limit="8MB", strict=False)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    shapes = [line.split()[2] for line in warning.splitlines()[1:] if line.startswith("  two_sorts/")]
    assert "f32[700,700]" in shapes and "f32[1000,1000]" in shapes, warning
    assert shapes == sorted(shapes, key=lambda shape: shape != "f32[1000,1000]"), shapes
    floor = report.limit_plan.floor_bytes
    assert floor == 4 * (700 * 8 + 1000 * 8 + 700 * 700 + 1000 * 1000) + 16  # + the tuple's table
    assert f"arguments and outputs are {exla.options.format_size(floor)}" in warning


def test_floor_names_what_no_rule_splits_with_xla_bytes():
    # The limit is far above the program: the plan splits nothing, yet the
    # floor names the 4 MB temporary that feeds the sort, which no rule can
    # slice; the sort itself is the output, counted with the outputs.
    from exla.bridge import xla as bridge

    text = SORTED_TEMPLATE.format(n=1000)
    optimised, report = exla.optimize_hlo(text, memory_limit="20MB", strict=True)
    found = report.limit_plan.floor
    stats = bridge.planned_memory(optimised)
    assert (found.argument_bytes, found.output_bytes) == (
        stats.argument_bytes, stats.output_bytes - stats.alias_bytes) == (32_000, 4_000_000)
    named = {u.where: u.bytes for u in found.unsplittable}
    assert named["sorted_1000/e"] == 4_000_000 and "sorted_1000/s" not in named, named
    # A lower bound on XLA's own figures: its temporaries hold the unsplittable value.
    assert stats.temp_bytes >= found.unsplittable_bytes == 4_000_000
    assert found.total_bytes == 8_032_000 <= stats.total_bytes == report.planned_peak_bytes
    assert f"  {found.headline()}, {found.against(report.planned_peak_bytes)}" in str(report)


def test_limit_below_the_floor_names_what_no_rule_splits():
    text = SORTED_TEMPLATE.format(n=1000)
    with pytest.raises(exla.ExlaError, match=(
            r"(?s)The limit is below the program's floor 8.03 MB .*\(8032000 bytes\): no plan "
            r"can meet it\..*\n  unsplittable: sorted_1000/e \(exponential\) f32\[1000,1000\] "
            r"4 MB: ")):
        exla.optimize_hlo(text, memory_limit="6MB", strict=True)


def test_report_gives_what_the_search_left_resident():
    _, report = exla.optimize_hlo(SORTED_TEMPLATE.format(n=1000), memory_limit="20MB")
    residue = report.limit_plan.residue
    assert 0 < residue.before_bytes and residue.kept_bytes <= residue.searched_bytes + 2**23
    assert f"  {residue.summary()}" in str(report).splitlines()
    assert report.to_dict()["limit_plan"]["residue"]["kept_bytes"] == residue.kept_bytes


def test_strict_from_environment(monkeypatch):
    monkeypatch.setenv("EXLA_STRICT", "1")
    with pytest.raises(exla.ExlaError, match="cannot fit"):
        exla.optimize_hlo(SORTED_TEMPLATE.format(n=1000), memory_limit="6MB")


def test_threshold_that_cannot_be_met_warns_and_strict_raises(caplog):
    text = SORTED_TEMPLATE.format(n=1000)
    with caplog.at_level(logging.WARNING, logger="exla"):
        exla.optimize_hlo(text, threshold="1MB", strict=False)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot meet the threshold 1 MB" in warnings[0], warnings
    assert "(sort)" in warnings[0]
    with pytest.raises(exla.ExlaError, match="cannot meet the threshold"):
        exla.optimize_hlo(text, threshold="1MB", strict=True)


def test_threshold_with_a_limit_is_enforced_when_the_plan_fits(caplog):
    # The limit is far above the program, so the plan fits; the 1 MB threshold
    # given with it still bounds every tensor and cannot be met (sort).
    text = SORTED_TEMPLATE.format(n=1000)
    with caplog.at_level(logging.WARNING, logger="exla"):
        _, report = exla.optimize_hlo(text, threshold="1MB", memory_limit="1GB", strict=False)
    assert report.within_memory_limit is True
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot meet the threshold 1 MB" in warnings[0], warnings
    with pytest.raises(exla.ExlaError, match="cannot meet the threshold 1 MB"):
        exla.optimize_hlo(text, threshold="1MB", memory_limit="1GB", strict=True)


def test_limit_below_inputs_and_outputs_is_rejected(kmv_hlo):
    text = SORTED_TEMPLATE.format(n=1000)  # output alone: 4 MB; input 32 KB
    with pytest.raises(exla.MemoryLimitError, match=r"below the program's own arguments and outputs, "
                                         r"4.03 MB \(4032000 bytes\)"):
        exla.optimize_hlo(text, memory_limit="3MB")


def test_flag_from_xla_flags_and_exla_flags():
    assert Options.from_flags("--xla_memory_limit=300MB --xla_cpu_enable_fast_math=false"
                              ).memory_limit == 300_000_000
    env = {"XLA_FLAGS": "--xla_memory_limit=1GB", "EXLA_FLAGS": "--xla_memory_limit=2GiB"}
    assert resolve_options(environ=env).memory_limit == 2 * 2**30
    assert resolve_options(memory_limit="5MB", environ=env).memory_limit == 5_000_000
    with pytest.raises(ValueError, match="--xla_memory_limit"):
        Options.from_flags("--xla_memory_limit=lots")


def test_function_reads_the_flag(monkeypatch):
    monkeypatch.setenv("EXLA_FLAGS", "--xla_memory_limit=7MB")
    assert exla.function(lambda x: x).options().memory_limit == 7_000_000


def test_cli_memory_limit(tmp_path, kmv_hlo, subprocess_env):
    path = tmp_path / "kmv.hlo"
    path.write_text(kmv_hlo(2000))
    done = subprocess.run([sys.executable, "-m", "exla", "optimize", str(path), "--memory-limit",
                           "4MB"], env=subprocess_env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert "memory limit 4 MB" in done.stderr.decode()
    assert _peak(done.stdout.decode()) <= 4_000_000
    sorted_path = tmp_path / "sorted.hlo"
    sorted_path.write_text(SORTED_TEMPLATE.format(n=1000))
    done = subprocess.run([sys.executable, "-m", "exla", "optimize", str(sorted_path),
                           "--memory-limit", "3MB"], env=subprocess_env, capture_output=True,
                          timeout=120)
    assert done.returncode == 2 and "below the program's own" in done.stderr.decode()


def test_attention_gradients_fit_in_one_pass_without_recomputation():
    # Scores 2 x 512 x 512 (2 MB) in the forward and the backward pass. The
    # softmax's row statistics need only the rows of a slice, so one loop over
    # query rows computes both passes: nothing is computed twice.
    require("tensorflow")
    import tensorflow as tf
    heads, seq, size = 2, 512, 32
    rng = np.random.default_rng(3)
    x = rng.normal(size=(seq, heads * size))
    weights = [rng.normal(size=(heads * size, heads * size)) * 0.1 for _ in range(3)]

    def fwd_bwd(x, wq, wk, wv):
        with tf.GradientTape() as tape:
            tape.watch([wq, wk, wv])
            q, k, v = (tf.transpose(tf.reshape(x @ w, (seq, heads, size)), (1, 0, 2))
                       for w in (wq, wk, wv))
            p = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / np.sqrt(size), axis=-1)
            loss = tf.reduce_sum(tf.matmul(p, v) ** 2)
        return [loss, *tape.gradient(loss, [wq, wk, wv])]

    args = [a.astype(np.float32) for a in (x, *weights)]
    explanation = exla.explain(fwd_bwd, *args, memory_limit="2MB")
    plan = explanation.limit_plan
    assert explanation.within_memory_limit
    assert _peak(explanation.hlo_after) <= 2_000_000 < _peak(explanation.hlo_before)
    assert plan.chosen.recomputed_flops == 0 and "extra work" not in str(explanation)
    assert [s.endswith("nothing recomputed") for s in plan.split] == [True], plan.split
    expected = _run(explanation.hlo_before, args)
    actual = _run(explanation.hlo_after, args)
    reference = [np.asarray(r) for r in fwd_bwd(*(tf.constant(a) for a in (x, *weights)))]
    assert_as_close_to(reference, actual, expected)


def _constant_program(n: int) -> str:
    """x * c for a parameter x and a literal c of n distinct-valued floats."""
    values = ", ".join(str((i % 97) / 8) for i in range(n))
    return (f"HloModule constant_{n}\n\nENTRY constant_{n} {{\n"
            f"  x = f32[{n}] parameter(0)\n  c = f32[{n}] constant({{{values}}})\n"
            f"  ROOT m = f32[{n}] multiply(x, c)\n}}\n")


def test_constants_count_in_the_limit():
    # A 1 MB argument, a 1 MB result and a 1 MB literal: the process holds
    # 3 MB, so a 2.5 MB limit is not met although arguments, outputs and
    # temporaries fit it.
    from exla.bridge import xla as bridge

    text = _constant_program(250_000)
    stats = bridge.planned_memory(text)
    assert stats.constant_bytes == 1_000_000
    without_constants = stats.temp_bytes + stats.argument_bytes + stats.output_bytes
    assert without_constants < 2_500_000 < stats.total_bytes == without_constants + 1_000_000
    with pytest.raises(exla.ExlaError, match="cannot fit the program in memory limit 2.5 MB"):
        exla.optimize_hlo(text, memory_limit="2500KB", strict=True)
    _, report = exla.optimize_hlo(text, memory_limit="3500KB", strict=True)
    assert report.within_memory_limit
    assert report.planned_peak_bytes == stats.total_bytes >= 3_000_000
    assert exla.predict_peak(text) == stats.total_bytes  # the model counts it too


def test_report_states_the_fixed_runtime_cost_measured_once_per_process():
    require("tensorflow")
    import tensorflow as tf
    from exla.memory_limit import runtime_memory

    def kernel_matvec(x, v):
        return tf.linalg.matvec(tf.exp(-tf.matmul(x, x, transpose_b=True)), v)  # 8 MB kernel

    x, v = np.random.default_rng(0).random((1000, 3)), np.random.default_rng(1).random(1000)
    explanation = exla.explain(kernel_matvec, x, v, memory_limit="1MB")
    cost = explanation.limit_plan.runtime_cost
    assert cost.framework == "TensorFlow"
    # TensorFlow alone is hundreds of MB resident. (What starting its XLA
    # runtime adds depends on what this process ran before: see
    # test_runtime_memory.py.)
    assert cost.resident_bytes > 200 * 2**20
    f = exla.function(kernel_matvec, memory_limit="1MB", strict=True)
    f(x, v)
    assert f.programs[0].runs == 1  # the program whose report this is ran
    assert f.programs[0].report.limit_plan.runtime_cost is cost  # measured once
    assert runtime_memory.measure("tensorflow") is cost
    assert cost.summary() in str(explanation)
    assert str(f.programs[0].report.to_dict()["limit_plan"]["runtime_cost"]["resident_bytes"]) \
        == str(cost.resident_bytes)
    # Without a framework (the HLO-level API) there is no runtime to state.
    _, report = exla.optimize_hlo(explanation.hlo_before, memory_limit="1MB")
    assert report.limit_plan.runtime_cost is None
    assert "the process holds" not in str(report)
