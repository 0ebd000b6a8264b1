"""exla.bridge.tensorflow: the one owner of TensorFlow's private API."""

from __future__ import annotations

import pytest

from tests._frameworks import require

require("tensorflow", module_level=True)
import tensorflow as tf  # noqa: E402

from exla.bridge import tensorflow as tf_private  # noqa: E402


def test_function_class_is_the_class_of_every_tf_function():
    assert isinstance(tf.function(lambda x: x), tf_private.function_class())
    assert isinstance(tf.function(lambda x: x, jit_compile=True), tf_private.function_class())


def test_in_xla_cluster_only_while_tracing_a_jit_compiled_function():
    seen = {}

    def probe(name):
        def f(x):
            seen[name] = tf_private.in_xla_cluster()
            return x
        return f

    tf.function(probe("graph"))(tf.constant(1.0))
    tf.function(probe("xla"), jit_compile=True)(tf.constant(1.0))
    probe("eager")(tf.constant(1.0))
    assert seen == {"graph": False, "xla": True, "eager": False}


def test_tape_recording_resumed_records_under_init_scope():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        with tf.init_scope(), tf_private.tape_recording_resumed():
            y = x * x
    assert tape.gradient(y, x).numpy() == 6.0


def test_tape_stays_paused_where_init_scope_paused_it():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        with tf.init_scope():
            y = x * x
    assert tape.gradient(y, x) is None


def test_hlo_generator_gives_the_concrete_functions_hlo():
    spec = tf.TensorSpec([2], tf.float32)
    concrete = tf.function(lambda x: x * 2.0, jit_compile=True).get_concrete_function(spec)
    text = tf_private.hlo_generator(concrete, [spec])(stage="hlo", platform_name="CPU")
    assert "HloModule" in text and "multiply" in text


def test_untracked_resource_variable_is_a_variable():
    v = tf_private.untracked_resource_variable(0, dtype=tf.int64, trainable=False, name="runs")
    v.assign_add(2)
    assert isinstance(v, tf.Variable) and int(v.numpy()) == 2


def test_a_missing_private_piece_is_named_with_the_release(monkeypatch):
    tf_private._private.cache_clear()
    monkeypatch.setitem(tf_private._PRIVATE_API, "context", ("context", "no_such_piece"))
    try:
        with pytest.raises(ImportError, match=rf"TensorFlow {tf.__version__}.*context\.no_such_piece"):
            tf_private.check_private_api()
    finally:
        monkeypatch.undo()
        tf_private._private.cache_clear()
    tf_private.check_private_api()
