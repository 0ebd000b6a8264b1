"""Running HLO with TensorFlow's XLA (exla.bridge.tensorflow_call)."""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

require("tensorflow", module_level=True)
import tensorflow as tf

from exla.bridge import tensorflow_call as tfc  # noqa: E402
from exla.bridge import xla as bridge  # noqa: E402
from exla.bridge.tensorflow_call import call_hlo  # noqa: E402


def _hlo(f, *args) -> str:
    return bridge.proto_to_text(f.experimental_get_compiler_ir(*args)(stage="hlo_serialized"))


def _assert_same(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        if e.dtype.is_floating:
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-12, atol=0)
        else:
            np.testing.assert_array_equal(a.numpy(), e.numpy())


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(0)
    return (tf.constant(rng.normal(size=(5, 4))), tf.constant(rng.normal(size=(4, 3))))


def test_tuple_of_float_and_int_outputs(inputs):
    @tf.function(jit_compile=True)
    def f(x, y):
        z = tf.matmul(x, y)
        return (tf.exp(z) + 1.0, tf.argmax(z, axis=1), tf.cast(tf.reduce_sum(z) > 0, tf.int32),
                z > 0.5, tf.cast(tf.round(z * 10), tf.int32))

    results = call_hlo(_hlo(f, *inputs), list(inputs))
    assert [r.dtype for r in results] == [tf.float64, tf.int64, tf.int32, tf.bool, tf.int32]
    _assert_same(results, f(*inputs))


def test_single_array_output_and_numpy_arguments(inputs):
    @tf.function(jit_compile=True)
    def g(x):
        return tf.reduce_max(x, axis=0) * 3.0

    text = _hlo(g, inputs[0])
    assert "->f64[4]{0}}" in text.split("\n", 1)[0]
    results = call_hlo(text, [inputs[0].numpy()])
    _assert_same(results, [g(inputs[0])])


def test_float32_program(inputs):
    x = tf.cast(inputs[0], tf.float32)

    @tf.function(jit_compile=True)
    def h(x):
        return tf.nn.softmax(x), tf.shape(x)

    _assert_same(call_hlo(_hlo(h, x), [x]), h(x))


def test_nested_tuple_results_are_flattened():
    text = """HloModule m, entry_computation_layout={(f32[2]{0})->(f32[2]{0}, (f32[], s32[]))}

ENTRY e {
  p = f32[2]{0} parameter(0)
  c = f32[] constant(3)
  i = s32[] constant(7)
  inner = (f32[], s32[]) tuple(c, i)
  ROOT t = (f32[2]{0}, (f32[], s32[])) tuple(p, inner)
}
"""
    results = call_hlo(text, [np.array([1.5, 2.5], np.float32)])
    assert [r.numpy().tolist() for r in results] == [[1.5, 2.5], 3.0, 7]
    assert [r.dtype for r in results] == [tf.float32, tf.float32, tf.int32]


def test_text_without_entry_layout():
    text = "HloModule m\n\nENTRY e {\n  p = s32[3] parameter(0)\n  ROOT n = s32[3] negate(p)\n}\n"
    (result,) = call_hlo(text, [np.array([1, -2, 3], np.int32)])
    assert result.numpy().tolist() == [-1, 2, -3]


def test_argument_mismatch_is_a_clear_error(inputs):
    text = "HloModule m\n\nENTRY e {\n  p = f64[5,4] parameter(0)\n  ROOT n = f64[5,4] negate(p)\n}\n"
    with pytest.raises(ValueError, match="takes 1 arguments, got 2"):
        call_hlo(text, list(inputs))
    with pytest.raises(ValueError, match=r"argument 0 is float32\[5, 4\].*f64\[5, 4\]"):
        call_hlo(text, [tf.cast(inputs[0], tf.float32)])
    with pytest.raises(ValueError, match="argument 0"):
        call_hlo(text, [inputs[1]])


def test_compiled_function_is_cached():
    text = "HloModule c\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p)\n}\n"
    assert tfc._compiled(text, "CPU") is tfc._compiled(text, "CPU")
    assert call_hlo(text, [[1.0, 2.0]])[0].numpy().tolist() == [2.0, 4.0]


def test_platform_follows_the_device():
    assert tfc._platform_for_device("/job:localhost/replica:0/task:0/device:GPU:0", "CUDA") == "CUDA"
    assert tfc._platform_for_device("", "ROCM") == "ROCM"
    assert tfc._platform_for_device("/device:CPU:0", "CUDA") == "CPU"
    assert tfc._platform_for_device("", None) == "CPU"
    expected = "CUDA" if tf.config.list_logical_devices("GPU") else "CPU"
    assert tfc.current_platform() in (expected, "ROCM")
    with tf.device("/CPU:0"):
        assert tfc.current_platform() == "CPU"

        @tf.function
        def traced():
            return tf.constant(tfc.current_platform())

        assert traced().numpy() == b"CPU"


def test_unsupported_element_type_is_a_clear_error():
    text = "HloModule m\n\nENTRY e {\n  p = f8e4m3b11fnuz[2] parameter(0)\n  ROOT n = f8e4m3b11fnuz[2] negate(p)\n}\n"
    with pytest.raises((NotImplementedError, ValueError)):
        call_hlo(text, [np.zeros(2, np.float32)])


def test_copies_run():
    # TensorFlow emits copies around variable results; StableHLO has no copy.
    text = """HloModule cp, entry_computation_layout={(f32[2,3]{1,0})->(f32[2,3]{0,1}, f32[2,3]{1,0})}

ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c = f32[2,3]{0,1} copy(p)
  n = f32[2,3]{1,0} negate(p)
  d = f32[2,3]{1,0} copy(n)
  ROOT t = (f32[2,3]{0,1}, f32[2,3]{1,0}) tuple(c, d)
}
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    first, second = call_hlo(text, [x])
    np.testing.assert_array_equal(first.numpy(), x)
    np.testing.assert_array_equal(second.numpy(), -x)
    assert bridge.planned_memory(text).output_bytes >= 2 * 24
