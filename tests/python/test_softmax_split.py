"""Softmax, logsumexp and cross entropy split along the dimension they normalise.

The logits h @ W of a large output layer are split along the classes: one
loop computes each row's maximum and sum of exponentials with the running
rescaling, the next computes the loss and the gradients class slice by
class slice, so no loop over rows reads all of W per slice
(cc/passes/tensor_splitter/reduction_merge.h). Every test runs the
rewritten program against the unrewritten one and, for f32, against a
float64 reference, checks XLA's buffer assignment against the limit, and
runs strict and checks from the run that exla's program is what ran.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

import exla
from tests.python._accuracy import assert_as_close_to, cross_entropy64
from tests.python._what_ran import jax_rewrites

pytestmark = pytest.mark.usefixtures("extension")


def _assert_close(reference, actual, expected) -> None:
    assert_as_close_to(reference, actual, expected, atol_fraction=1e-6)


LIMIT = "1MB"
BATCH, WIDTH, VOCAB = 64, 16, 5000  # logits 1.28 MB, W 320 KB


def _peak(text: str) -> int:
    from exla.bridge import xla as bridge

    return bridge.planned_memory(text).total_bytes


def _run(text: str, args: list) -> list[np.ndarray]:
    from exla.bridge.tensorflow_call import call_hlo

    return [np.asarray(t) for t in call_hlo(text, args)]


def _inputs(seed: int = 0, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(BATCH, WIDTH)).astype(np.float32)
    w = (rng.normal(size=(WIDTH, VOCAB)) * scale).astype(np.float32)
    labels = rng.integers(0, VOCAB, size=(BATCH,)).astype(np.int32)
    return h, w, labels


def _logsumexp64(h, w):
    logits = h.astype(np.float64) @ w.astype(np.float64)
    m = logits.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]


def _assert_within_limit(explanation) -> None:
    """Rewritten, and within the limit by XLA's buffer assignment (the original is not)."""
    assert explanation.rewritten and explanation.within_memory_limit
    limit = exla.parse_size(LIMIT)
    assert _peak(explanation.hlo_after) <= limit < _peak(explanation.hlo_before)


def _assert_split_along_classes(explanation) -> None:
    """Within the limit by XLA's buffer assignment, every loop over the classes."""
    _assert_within_limit(explanation)
    _assert_loops_over_classes(explanation, explanation.limit_plan.split)


def _assert_loops_over_classes(explanation, splits) -> None:
    assert splits and all(f" on dimension 1 of extent {VOCAB}:" in s for s in splits), splits
    assert "merge_body" in explanation.hlo_after  # the running maximum and sum


def _assert_split_through_the_softmax(explanation) -> None:
    """Within the limit by XLA's buffer assignment, the first loop (the
    softmax's statistics) over the classes; later loops along either
    dimension, as the cost model chooses."""
    _assert_within_limit(explanation)
    splits = explanation.limit_plan.split
    assert splits and f" on dimension 1 of extent {VOCAB}:" in splits[0], splits
    assert "merge_body" in explanation.hlo_after  # the running maximum and sum


# Forward only, a loop over rows does as well as one over the classes (it
# recomputes nothing, and the memory-limit search prefers it): sizes set by
# hand test the rule there.
SIZES = dict(threshold="256KB", split_size="64KB")


def _explain_with_sizes(fn, *args):
    explanation = exla.explain(fn, *args, **SIZES)
    assert explanation.rewritten
    _assert_loops_over_classes(explanation, [line for line in str(explanation).splitlines()
                                             if "note (tensor-splitter): split" in line])
    return explanation


def _tf_cross_entropy():
    require("tensorflow")
    import tensorflow as tf

    def xent(h, w, labels):
        with tf.GradientTape() as tape:
            tape.watch([h, w])
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=h @ w))
        return loss, tape.gradient(loss, [h, w])

    return xent


def test_tf_sparse_cross_entropy_splits_the_vocabulary():
    xent = _tf_cross_entropy()
    h, w, labels = _inputs()
    explanation = exla.explain(xent, h, w, labels, memory_limit=LIMIT)
    _assert_split_along_classes(explanation)
    expected = _run(explanation.hlo_before, [h, w, labels])
    actual = _run(explanation.hlo_after, [h, w, labels])
    _assert_close(cross_entropy64(h, w, labels), actual, expected)


def test_tf_sparse_cross_entropy_strict_function_runs_the_rewrite():
    import tensorflow as tf

    xent = _tf_cross_entropy()
    h, w, labels = _inputs(seed=1)
    f = exla.function(xent, memory_limit=LIMIT, strict=True)
    loss, (dh, dw) = f(h, w, labels)
    info = f.programs[0]
    assert info.rewritten and info.runs >= 1
    expected = tf.function(xent, jit_compile=True)(h, w, labels)
    actual = [loss.numpy(), dh.numpy(), dw.numpy()]
    _assert_close(cross_entropy64(h, w, labels), actual,
                        [expected[0].numpy(), expected[1][0].numpy(), expected[1][1].numpy()])


def test_tf_logsumexp_of_large_logits_keeps_its_digits():
    # Logits of magnitude ~1e3: exp(x) alone overflows f32; the running
    # rescaling keeps every exponential's argument <= 0.
    require("tensorflow")
    import tensorflow as tf

    def lse(h, w):
        return tf.math.reduce_logsumexp(h @ w, axis=1)

    h, w, _ = _inputs(seed=2, scale=300.0)
    explanation = _explain_with_sizes(lse, h, w)
    expected = _run(explanation.hlo_before, [h, w])
    actual = _run(explanation.hlo_after, [h, w])
    assert np.all(np.isfinite(actual[0]))
    _assert_close([_logsumexp64(h, w)], actual, expected)
    f = exla.function(lse, strict=True, **SIZES)
    np.testing.assert_allclose(f(h, w).numpy(), expected[0], rtol=1e-6)
    assert f.programs[0].runs >= 1


def test_masked_row_gives_what_the_program_gives():
    # A row of -inf logits (fully masked) is NaN in the program's own
    # logsumexp (-inf - -inf); the other rows are finite: the split keeps both.
    require("tensorflow")
    import tensorflow as tf

    def lse(h, w, mask):
        logits = tf.where(mask[:, None] > 0, h @ w, -np.inf)
        m = tf.reduce_max(logits, axis=1)
        return tf.math.log(tf.reduce_sum(tf.exp(logits - m[:, None]), axis=1)) + m

    h, w, _ = _inputs(seed=3)
    mask = np.ones(BATCH, np.float32)
    mask[5] = 0
    explanation = _explain_with_sizes(lse, h, w, mask)
    expected = _run(explanation.hlo_before, [h, w, mask])[0]
    actual = _run(explanation.hlo_after, [h, w, mask])[0]
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    assert np.isnan(expected[5]) and np.isfinite(np.delete(expected, 5)).all()
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_jax_logsumexp_and_its_gradient_split_the_classes():
    require("jax")
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def loss(h, w):
        return jnp.mean(logsumexp(h @ w, axis=1))

    h, w, _ = _inputs(seed=4)
    value_and_grad = jax.value_and_grad(loss, argnums=(0, 1))
    explanation = exla.explain(exla.jit(value_and_grad, memory_limit=LIMIT), h, w)
    _assert_split_along_classes(explanation)
    f = exla.jit(value_and_grad, memory_limit=LIMIT, strict=True)
    with jax_rewrites() as rewritten:
        value, (dh, dw) = f(h, w)
    assert len(rewritten) == 1, "exla's executable did not run"
    expected_value, (expected_dh, expected_dw) = jax.jit(value_and_grad)(h, w)
    logits = h.astype(np.float64) @ w.astype(np.float64)
    p = np.exp(logits - _logsumexp64(h, w)[:, None]) / BATCH
    reference = [_logsumexp64(h, w).mean(), p @ w.T.astype(np.float64),
                 h.T.astype(np.float64) @ p]
    _assert_close(reference, [value, dh, dw], [expected_value, expected_dh, expected_dw])


def test_jax_optax_cross_entropy_splits_the_vocabulary():
    # optax picks the label's logit with take_along_axis (a gather along the
    # classes) and its gradient scatters into zeros: both become selects that
    # each slice of classes computes (take_along_axis.h).
    require("jax")
    import jax
    require("optax")
    import optax
    import jax.numpy as jnp

    def loss(h, w, labels):
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(h @ w, labels))

    h, w, labels = _inputs(seed=5)
    value_and_grad = jax.value_and_grad(loss, argnums=(0, 1))
    explanation = exla.explain(exla.jit(value_and_grad, memory_limit=LIMIT), h, w, labels)
    _assert_split_along_classes(explanation)
    assert " gather(" not in explanation.hlo_after and " scatter(" not in explanation.hlo_after
    f = exla.jit(value_and_grad, memory_limit=LIMIT, strict=True)
    with jax_rewrites() as rewritten:
        value, (dh, dw) = f(h, w, labels)
    assert len(rewritten) == 1, "exla's executable did not run"
    expected_value, (expected_dh, expected_dw) = jax.jit(value_and_grad)(h, w, labels)
    _assert_close(cross_entropy64(h, w, labels), [value, dh, dw],
                        [expected_value, expected_dh, expected_dw])


def test_jax_label_out_of_range_gives_what_the_program_gives():
    # optax's take_along_axis makes an out-of-range label's loss NaN; the
    # rewritten gather clamps as XLA's gather does, and jax masks it the same.
    require("jax")
    import jax
    require("optax")
    import optax
    import jax.numpy as jnp

    def loss(h, w, labels):
        return optax.softmax_cross_entropy_with_integer_labels(h @ w, labels)

    h, w, labels = _inputs(seed=6)
    labels[3] = VOCAB + 7
    explanation = exla.explain(exla.jit(loss, memory_limit=LIMIT), h, w, labels)
    assert explanation.rewritten and " gather(" not in explanation.hlo_after
    f = exla.jit(loss, memory_limit=LIMIT, strict=True)
    with jax_rewrites() as rewritten:
        actual = np.asarray(f(h, w, labels))
    assert len(rewritten) == 1, "exla's executable did not run"
    expected = np.asarray(jax.jit(loss)(h, w, labels))
    assert np.isnan(expected[3]) and np.isfinite(np.delete(expected, 3)).all()
    np.testing.assert_allclose(actual, expected, rtol=1e-5, equal_nan=True)


def _weighted_row_sum64(h, w, c, log: bool):
    """sum_j f(h @ w)[r, j] * c[j] per row, f = softmax or log_softmax, in float64."""
    logits = h.astype(np.float64) @ w.astype(np.float64)
    shifted = logits - _logsumexp64(h, w)[:, None]
    return ((shifted if log else np.exp(shifted)) @ c.astype(np.float64)).sum()


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_tf_softmax_and_log_softmax_with_gradients(log):
    # tf.nn.softmax / tf.nn.log_softmax of the logits, weighted per class and
    # summed, with the gradients: the loss of a soft-label classifier.
    require("tensorflow")
    import tensorflow as tf
    normalise = tf.nn.log_softmax if log else tf.nn.softmax

    def loss_and_gradients(h, w, c):
        with tf.GradientTape() as tape:
            tape.watch([h, w])
            loss = tf.reduce_sum(normalise(h @ w, axis=-1) * c[None, :])
        return loss, tape.gradient(loss, [h, w])

    h, w, _ = _inputs(seed=7)
    c = np.random.default_rng(8).normal(size=VOCAB).astype(np.float32)
    explanation = exla.explain(loss_and_gradients, h, w, c, memory_limit=LIMIT)
    # The gradient's loop may run along the rows: the cost model, calibrated
    # with jaxlib's XLA (whose column updates scan whole rows), prefers them
    # for log_softmax; TensorFlow's XLA runs both alike.
    _assert_split_through_the_softmax(explanation)
    expected = _run(explanation.hlo_before, [h, w, c])
    actual = _run(explanation.hlo_after, [h, w, c])
    assert abs(actual[0] - expected[0]) <= 1e-5 * abs(expected[0]) + 1e-6
    reference = _weighted_row_sum64(h, w, c, log)
    assert abs(actual[0] - reference) <= 4 * abs(expected[0] - reference) + 1e-6 * abs(reference)
    for a, e in zip(actual[1:], expected[1:]):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5 * np.abs(e).max())


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_jax_softmax_and_log_softmax_with_gradients(log):
    require("jax")
    import jax
    normalise = jax.nn.log_softmax if log else jax.nn.softmax

    def loss(h, w, c):
        return (normalise(h @ w, axis=-1) * c[None, :]).sum()

    h, w, _ = _inputs(seed=9)
    c = np.random.default_rng(10).normal(size=VOCAB).astype(np.float32)
    value_and_grad = jax.value_and_grad(loss, argnums=(0, 1))
    explanation = exla.explain(exla.jit(value_and_grad, memory_limit=LIMIT), h, w, c)
    _assert_split_along_classes(explanation)
    f = exla.jit(value_and_grad, memory_limit=LIMIT, strict=True)
    with jax_rewrites() as rewritten:
        value, grads = f(h, w, c)
    assert len(rewritten) == 1, "exla's executable did not run"
    expected_value, expected_grads = jax.jit(value_and_grad)(h, w, c)
    reference = _weighted_row_sum64(h, w, c, log)
    assert abs(value - reference) <= 4 * abs(expected_value - reference) + 1e-6 * abs(reference)
    for a, e in zip(grads, expected_grads):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5 * np.abs(e).max())
