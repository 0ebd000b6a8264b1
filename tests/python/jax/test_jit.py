"""exla.jit: the numbers of jax.jit, smaller programs, jax.jit's calling convention."""

from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from exla.bridge.jax import enable_x64

import exla
from exla import ExlaError
from exla.jax import compile_hook
from tests.python._what_ran import jax_rewrites as _rewrites
from tests.python.jax._workloads import WORKLOADS

pytestmark = pytest.mark.usefixtures("extension")


def _leaves(tree):
    return [np.asarray(leaf) for leaf in jax.tree.leaves(tree)]


def _assert_close(actual, expected, rtol):
    """Every leaf equal up to ``rtol`` relative to its largest magnitude."""
    a, e = _leaves(actual), _leaves(expected)
    assert len(a) == len(e)
    for x, y in zip(a, e):
        assert x.shape == y.shape
        if np.issubdtype(y.dtype, np.integer):
            np.testing.assert_array_equal(x, y)
        else:
            scale = max(float(np.max(np.abs(y))), 1e-30)
            assert float(np.max(np.abs(x.astype(np.float64) - y))) <= rtol * scale


# Workloads whose largest intermediate exla splits (the RNN's input projection
# feeds the scan whole, so it stays; that test checks the numbers only).
_SPLIT = {"kernel_matvec", "kernel_matvec_grads", "knn_top_k", "attention_fwd_bwd"}


def _temp_bytes(compiled) -> int:
    # XLA's buffer assignment of the executable that runs (CPU).
    return int(compiled.memory_analysis().temp_size_in_bytes)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_float32_matches_jax_jit_and_a_float64_reference(name):
    fn, make_args, threshold = WORKLOADS[name]
    args = make_args(np.float32)
    # strict where exla meets the threshold; the RNN keeps its input projection
    # whole (it feeds the scan), which strict would report as an error.
    with _rewrites() as rewritten:
        compiled = exla.jit(fn, threshold=threshold, strict=name in _SPLIT).lower(*args).compile()
    # Every workload is rewritten (the RNN's by loops below its input projection).
    assert len(rewritten) == 1, rewritten
    ours = compiled(*args)
    assert all(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(ours))
    plain = jax.jit(fn).lower(*args).compile()
    _assert_close(ours, plain(*args), rtol=1e-5)
    with enable_x64():
        reference = jax.jit(fn)(*make_args(np.float64))
    if name == "knn_top_k":  # indices may differ on near-ties in float32
        ours, reference = ours["distances"], reference["distances"]
    _assert_close(ours, reference, rtol=1e-4)
    limit = exla.parse_size(threshold)
    if name in _SPLIT:
        assert _temp_bytes(plain) > limit or name == "kernel_matvec"  # XLA fuses that one whole
        if name == "attention_fwd_bwd":
            # Several slices of the backward pass are live at once: each is
            # below the threshold, their sum is not.
            assert _temp_bytes(compiled) < _temp_bytes(plain) / 4
        else:
            assert _temp_bytes(compiled) < limit


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_float64_matches_jax_jit(name):
    fn, make_args, threshold = WORKLOADS[name]
    with enable_x64():
        args = make_args(np.float64)
        with _rewrites() as rewritten:
            ours = exla.jit(fn, threshold=threshold, strict=name in _SPLIT)(*args)
        assert len(rewritten) == 1, rewritten
        assert jax.tree.leaves(ours)[0].dtype == jnp.float64
        _assert_close(ours, jax.jit(fn)(*args), rtol=1e-10)


def test_explain_reports_the_largest_tensor_below_the_threshold():
    fn, make_args, threshold = WORKLOADS["knn_top_k"]
    report = exla.explain(exla.jit(fn, threshold=threshold), *make_args(np.float32))
    limit = exla.parse_size(threshold)
    assert report.rewritten and "tensor-splitter" in report.changed_passes
    assert report.largest_tensor_bytes_before > limit >= report.largest_tensor_bytes_after
    assert report.planned_temp_bytes_before > limit > report.planned_temp_bytes_after


def test_transformations_inside():
    x = np.random.default_rng(1).random((600, 3)).astype(np.float32)
    v = np.ones(600, np.float32)

    def body(x, v):
        def loop(carry):
            i, acc = carry
            return i + 1, acc + WORKLOADS["kernel_matvec"][0](x, v * i)
        _, acc = lax.while_loop(lambda c: c[0] < 3, loop, (0, jnp.zeros_like(v)))
        return lax.cond(acc[0] > 0, lambda a: a, lambda a: -a, acc)

    batched = jax.vmap(WORKLOADS["kernel_matvec"][0], in_axes=(None, 0))
    vs = np.stack([v, 2 * v])
    with _rewrites() as rewritten:
        _assert_close(exla.jit(body, threshold="500KB", strict=True)(x, v), jax.jit(body)(x, v), 1e-5)
        _assert_close(exla.jit(batched, threshold="500KB", strict=True)(x, vs), jax.jit(batched)(x, vs), 1e-5)
    assert len(rewritten) == 2, rewritten


def test_called_inside_jax_jit_rewrites_the_outer_program():
    inner = exla.jit(WORKLOADS["kernel_matvec"][0], threshold="1MB")

    @jax.jit
    def outer(x, v):
        return inner(x, v) * 2.0 + 1.0

    x, v = WORKLOADS["kernel_matvec"][1](np.float32)
    with _rewrites() as rewritten:
        result = outer(x, v)
    _assert_close(result, 2.0 * jax.jit(WORKLOADS["kernel_matvec"][0])(x, v) + 1.0, 1e-5)
    assert rewritten == ["jit_outer"]


def test_grad_of_an_exla_jit_function():
    fn = exla.jit(lambda x, v: jnp.sum(WORKLOADS["kernel_matvec"][0](x, v) ** 2), threshold="300KB")
    x, v = (a[:300] for a in WORKLOADS["kernel_matvec"][1](np.float32))
    expected = jax.grad(lambda x, v: jnp.sum(WORKLOADS["kernel_matvec"][0](x, v) ** 2))(x, v)
    with _rewrites() as rewritten:
        _assert_close(jax.grad(fn)(x, v), expected, 1e-5)
    assert rewritten, "the gradient program was not rewritten"


def test_calling_convention():
    calls = []

    @exla.jit(static_argnums=1, static_argnames="scale", donate_argnums=2)
    def f(tree, power, buffer, *, scale=1.0):
        calls.append(power)
        return {"out": (tree["a"] ** power + tree["b"]) * scale, "buf": buffer + 1}

    assert f.__name__ == "f"
    tree = {"a": jnp.arange(4.0), "b": jnp.ones(4)}
    buffer = jnp.zeros(3)
    result = f(tree, 2, buffer, scale=3.0)
    np.testing.assert_allclose(result["out"], (np.arange(4.0) ** 2 + 1) * 3)
    np.testing.assert_allclose(result["buf"], np.ones(3))
    assert buffer.is_deleted()  # donated, as with jax.jit
    f(tree, 2, jnp.zeros(3), scale=3.0)
    f(tree, 3, jnp.zeros(3), scale=3.0)
    f({"a": jnp.arange(5.0), "b": jnp.ones(5)}, 3, jnp.zeros(3), scale=3.0)
    assert calls == [2, 3, 3]  # traced once per abstract signature and static values
    assert f._cache_size() == 3

    @exla.jit
    def g(x):
        return x + 1
    assert float(g(1.0)) == 2.0
    assert "stablehlo" in exla.jit(g).lower(1.0).as_text()


def test_unchanged_program_is_not_rewritten():
    with _rewrites() as rewritten:
        assert float(exla.jit(lambda x: jnp.sum(x * 2), threshold="1MB")(jnp.ones(10))) == 20.0
    assert rewritten == []


def test_bad_input_is_rejected_clearly():
    with pytest.raises(TypeError, match="exla.jit needs a callable, got int"):
        exla.jit(3)
    with pytest.raises(ValueError, match="invalid size '1XB' for threshold"):
        exla.jit(lambda x: x, threshold="1XB")
    with pytest.raises(ValueError, match="sizes cannot be negative"):
        exla.jit(lambda x: x, split_size=-5)
    with pytest.raises(ValueError, match=r"unknown exla passes \['no-such-pass'\]"):
        exla.jit(lambda x: x, passes=["no-such-pass"])
    with pytest.raises(ValueError, match="static_argnums"):
        exla.jit(lambda x: x, static_argnums=3)
    with pytest.raises(ValueError, match="static_argnames"):
        exla.jit(lambda x: x, static_argnames="y")
    with pytest.raises(ValueError, match="[Nn]on-hashable static argument"):
        exla.jit(lambda x, n: x * len(n), static_argnums=1)(1.0, [1, 2])


def _planned_peak(compiled) -> int:
    # XLA's buffer assignment of the executable that runs: what the limit bounds.
    m = compiled.memory_analysis()
    return int(m.temp_size_in_bytes + m.argument_size_in_bytes + m.output_size_in_bytes
               - m.alias_size_in_bytes)


def test_memory_limit_bounds_the_planned_peak_of_the_program_that_runs():
    # Gradients of the kernel matvec: XLA keeps n x n kernels alive (16 MB).
    fn = WORKLOADS["kernel_matvec_grads"][0]
    rng = np.random.default_rng(0)
    x, v = rng.random((1000, 3), np.float32), rng.random((1000, 1), np.float32)
    plain = jax.jit(fn).lower(x, v).compile()
    assert _planned_peak(plain) > 16_000_000
    ours = exla.jit(fn, memory_limit="4MB", strict=True).lower(x, v).compile()
    assert _planned_peak(ours) <= 4_000_000
    _assert_close(ours(x, v), plain(x, v), rtol=1e-5)
    with pytest.raises(ValueError, match="memory_limit"):
        exla.jit(lambda x: x, memory_limit="lots")


def _sorted_sum(x):
    # Sorting all n*n values at once: the splitter cannot slice a sort along
    # the dimension it sorts, so the 16 MB operand stays whole.
    return jnp.sum(jnp.sort(jnp.exp(x[:, None] * x[None, :]).reshape(-1))[:10])


def test_memory_limit_that_cannot_be_met_raises_under_strict_and_names_the_tensor():
    x = np.linspace(0, 1, 2000, dtype=np.float32)
    with pytest.raises(ExlaError, match=r"(?s)cannot fit the program in memory limit 8 MB.*\(sort\)"):
        exla.jit(_sorted_sum, memory_limit="8MB", strict=True)(x)


def test_memory_limit_report_and_error_give_the_floor_by_name():
    x = np.linspace(0, 1, 2000, dtype=np.float32)
    report = exla.explain(jax.jit(_sorted_sum), x, memory_limit="64MB")
    found = report.limit_plan.floor
    xla = jax.jit(_sorted_sum).lower(x).compile().memory_analysis()
    assert (found.argument_bytes, found.output_bytes) == (
        xla.argument_size_in_bytes, xla.output_size_in_bytes - xla.alias_size_in_bytes) == (8000, 4)
    (sort,) = [u for u in found.unsplittable if u.opcode == "sort"]
    assert sort.bytes == 16_000_000 == found.unsplittable_bytes and sort.shape == "f32[4000000]"
    # A lower bound on XLA's planned peak, of the plan and of the plain program.
    assert found.total_bytes <= min(report.limit_plan.peak_bytes, _planned_peak(
        jax.jit(_sorted_sum).lower(x).compile()))
    assert found.headline() in str(report)
    with pytest.raises(ExlaError, match=r"(?s)below the program's floor 16 MB .*\n  unsplittable: "
                                        r"\S+/sort\.\d+ \(sort\) f32\[4000000\] 16 MB: "):
        exla.jit(_sorted_sum, memory_limit="8MB", strict=True)(x)


def _broken_optimize(*args, **kwargs):
    raise RuntimeError("simulated failure inside exla")


def test_failure_falls_back_with_one_warning(monkeypatch, caplog):
    monkeypatch.setattr("exla.jax.compile_hook.optimize_hlo", _broken_optimize)
    fn, make_args, threshold = WORKLOADS["kernel_matvec"]
    args = make_args(np.float32)
    with caplog.at_level(logging.WARNING, logger="exla"):
        first = exla.jit(fn, threshold=threshold)(*args)
        exla.jit(fn, threshold=threshold)(args[0][:500], args[1][:500])
    warnings = [r for r in caplog.records if "simulated failure" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].name == "exla"
    _assert_close(first, jax.jit(fn)(*args), 1e-6)


def test_strict_raises(monkeypatch):
    monkeypatch.setattr("exla.jax.compile_hook.optimize_hlo", _broken_optimize)
    fn, make_args, threshold = WORKLOADS["kernel_matvec"]
    with pytest.raises(ExlaError, match="simulated failure inside exla"):
        exla.jit(fn, threshold=threshold, strict=True)(*make_args(np.float32))


# -- strict raises wherever exla.function's does ---------------------------------


def test_strict_raises_when_a_program_stays_above_its_threshold():
    # The splitter cannot slice a sort along the dimension it sorts: no pass
    # changes the program, and strict says so instead of compiling it.
    x = np.random.default_rng(0).random(100_000).astype(np.float32)
    with _rewrites() as rewritten, pytest.raises(ExlaError, match=r"cannot meet the threshold 1 KB"):
        exla.jit(lambda x: jnp.sort(x * 2.0), threshold="1KB", strict=True)(x)
    assert rewritten == []


def test_settings_not_found_warn_and_strict_raises(monkeypatch, caplog):
    # Marked as an exla.jit function's, but its settings are not registered
    # here (as for a program traced in another process).
    loose = exla.jit(lambda x: jnp.sum(x * 2.0), threshold="1KB")
    strict = exla.jit(lambda x: jnp.sum(x * 3.0), threshold="1KB", strict=True)
    from_environment = exla.jit(lambda x: jnp.sum(x * 4.0))
    monkeypatch.setattr(compile_hook, "_registry", {})
    with caplog.at_level(logging.WARNING, logger="exla"):
        assert float(loose(jnp.ones(10))) == 20.0
    assert any("are not registered in this process" in r.getMessage() for r in caplog.records)
    with pytest.raises(ExlaError, match="are not registered in this process"):
        strict(jnp.ones(10))
    monkeypatch.setenv("EXLA_STRICT", "1")
    with pytest.raises(ExlaError, match="are not registered in this process"):
        from_environment(jnp.ones(10))


def test_strict_raises_on_host_callbacks(caplog):
    def with_callback(x):
        y = jax.pure_callback(lambda a: a, jax.ShapeDtypeStruct(x.shape, x.dtype), x * 2.0)
        return jnp.sum(y)

    x = np.ones(1000, np.float32)
    with caplog.at_level(logging.INFO, logger="exla"):
        assert float(exla.jit(with_callback, threshold="1KB")(x)) == 2000.0
    assert any("it has host callbacks" in r.getMessage() for r in caplog.records)
    with pytest.raises(ExlaError, match="it has host callbacks"):
        exla.jit(with_callback, threshold="1KB", strict=True)(x)


def test_a_module_xla_rejects_falls_back(monkeypatch, caplog):
    from exla.report import PassRecord, Report

    def bad_module(text, **kwargs):
        return "HloModule broken\nENTRY e { ROOT p = f32[] no-such-op() }", Report(
            passes=[PassRecord("tensor-splitter", True, 0.0)])

    monkeypatch.setattr("exla.jax.compile_hook.optimize_hlo", bad_module)
    with caplog.at_level(logging.WARNING, logger="exla"):
        assert float(exla.jit(lambda x: x * 3, threshold="1MB")(2.0)) == 6.0
    assert any("running without exla" in r.getMessage() for r in caplog.records)
    with pytest.raises(ExlaError):
        exla.jit(lambda x: x * 4, threshold="1MB", strict=True)(2.0)


def test_explain_accepts_jax_functions():
    fn, make_args, threshold = WORKLOADS["knn_top_k"]
    args = make_args(np.float32)
    report = exla.explain(exla.jit(fn, threshold=threshold), *args)
    assert report.function == "knn" and report.platform == "CPU"
    assert report.inputs == [((300, 3), "float32"), ((2000, 3), "float32")]
    assert "while" in report.hlo_after and "exla.explain(knn)" in str(report)
    # A plain jax.jit function with the threshold given to explain.
    assert exla.explain(jax.jit(fn), *args, threshold=threshold).rewritten


def test_docstring_example():
    import doctest
    import sys

    result = doctest.testmod(sys.modules["exla.jax.exla_jit"], optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_fast_math_keyword_allows_the_distance_expansion():
    def nearest(x, y):
        return jnp.min(jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, -1), 1)  # 400x300x32 f32

    x = np.random.default_rng(0).normal(size=(400, 32)).astype(np.float32)
    y = np.random.default_rng(1).normal(size=(300, 32)).astype(np.float32)
    exact = exla.explain(exla.jit(nearest, threshold="1MB"), x, y)
    fast = exla.explain(exla.jit(nearest, threshold="1MB", fast_math=True), x, y)
    assert "algebraic-rewriter" not in exact.changed_passes
    assert "algebraic-rewriter" in fast.changed_passes
    jitted = exla.jit(nearest, threshold="1MB", fast_math=True)
    with _rewrites() as rewritten:
        _assert_close(jitted(x, y), jax.jit(nearest)(x, y), 1e-3)
    assert rewritten, "exla's executable did not run"
