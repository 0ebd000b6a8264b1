"""Registry of real programs lowered to HLO text, for the parser/printer tests and tools.

Each entry is a zero-argument builder that traces a real TensorFlow or JAX
function at a small size (seconds), lowers it to HLO text and runs the original
function once for reference outputs. Builders run lazily and are cached per
process: `get(name)` builds one program, `all_programs()` builds every one.

HLO text is produced exactly as exla produces it: TensorFlow's
``experimental_get_compiler_ir(*args)(stage='hlo_serialized')`` (never
``stage='hlo'``, which elides large constants as ``{...}``) or JAX's
``jit(f).lower(*args).compiler_ir('hlo')`` serialized to an ``HloModuleProto``,
then printed by ``exla.bridge.xla.proto_to_text`` (short parsable form, full
constant literals). A few programs are kept in XLA's long print form (``%``
names, computation signatures, metadata) so the parser sees both styles.

The entry parameters of a TensorFlow program are the explicit arguments
followed by ``concrete_fn.captured_inputs`` (variables read before the call).
Variables the function assigns appear as extra results after the function's
own outputs, in the order of the module's ``input_output_alias`` entries;
their reference value is the variable after the reference call.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import re
from typing import Callable

import numpy as np

__all__ = ["CorpusProgram", "MissingFramework", "names", "get", "all_programs", "buildable",
           "source", "REGISTRY"]


class MissingFramework(ModuleNotFoundError):
    """The framework that builds a program is not installed here (``name`` says which)."""


@dataclasses.dataclass
class CorpusProgram:
    """One program of the corpus.

    Attributes:
      name: registry key.
      hlo_text: HLO module text (short parsable form unless `long_form`).
      inputs: numpy arrays, one per entry parameter, in parameter order.
      reference_outputs: numpy arrays, one per entry result (a tuple root is
        flattened), computed by running the original tf.function / jax.jit.
      source: "tensorflow" or "jax".
      rtol, atol: tolerance for comparing an HLO execution with
        `reference_outputs` (np.allclose semantics; integer/bool outputs are
        compared exactly).
      long_form: True when `hlo_text` is XLA's long print form.
      description: what the program is.
      framework: the library whose model or API the program comes from:
        "tensorflow", "tf_keras", "gpflow", "tfp", "jax", "flax", "optax"
        (defaults to `source`).
    """

    name: str
    hlo_text: str
    inputs: list
    reference_outputs: list
    source: str
    rtol: float
    atol: float
    long_form: bool = False
    description: str = ""
    framework: str = ""

    def __post_init__(self):
        if not self.framework:
            self.framework = self.source

    @property
    def instruction_count(self) -> int:
        """Number of instructions in all computations (lines with ' = ')."""
        return sum(1 for line in self.hlo_text.splitlines()
                   if re.match(r"\s*(ROOT\s+)?%?[\w.\-]+\s*=\s", line))


REGISTRY: dict[str, Callable[[], CorpusProgram]] = {}
_SOURCES: dict[str, str] = {}


def _register(fn: Callable[[], CorpusProgram]) -> Callable[[], CorpusProgram]:
    name = fn.__name__
    assert name not in REGISTRY, name
    REGISTRY[name] = functools.lru_cache(maxsize=None)(fn)
    # A builder lowers its program with exactly one of the two helpers.
    _SOURCES[name] = "jax" if "_jax_program" in fn.__code__.co_names else "tensorflow"
    return fn


def names() -> list[str]:
    return list(REGISTRY)


def source(name: str) -> str:
    """The framework that builds program ``name``: "tensorflow" or "jax"."""
    return _SOURCES[name]


def buildable(name: str) -> bool:
    """Whether this environment has the framework that builds ``name``."""
    return importlib.util.find_spec(source(name)) is not None


def get(name: str) -> CorpusProgram:
    """Program ``name``, built on first use.

    Raises :class:`MissingFramework` where its framework is not installed
    (TensorFlow programs in a JAX-only environment)."""
    if not buildable(name):
        raise MissingFramework(f"corpus program {name!r} needs {source(name)}, which is not "
                               f"installed", name=source(name))
    return REGISTRY[name]()


def all_programs() -> list[CorpusProgram]:
    return [get(n) for n in names()]


# --------------------------------------------------------------------------
# Lowering helpers
# --------------------------------------------------------------------------

def _proto_to_text(proto: bytes, long_form: bool = False) -> str:
    from exla.bridge import xla as bridge  # the only jaxlib glue in exla

    if not long_form:
        return bridge.proto_to_text(proto)
    return bridge.proto_to_text(proto, short=False)


def _np(x):
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x)


def _output_aliases(hlo_text: str) -> tuple[tuple[int, int], ...]:
    """(output index, parameter number) pairs of the module header."""
    from exla._hlo_signature import read_signature

    return read_signature(hlo_text).aliases


def entry_parameter_count(hlo_text: str) -> int:
    """Number of parameters of the ENTRY computation."""
    from exla._hlo_signature import read_signature

    return len(read_signature(hlo_text).parameters)


def _check_parameters(name, text, inputs):
    n = entry_parameter_count(text)
    if n != len(inputs):
        # tf2xla folds compile-time-constant arguments into the module.
        raise RuntimeError(f"{name}: module has {n} parameters, "
                           f"{len(inputs)} inputs were collected")


def _unfolded_arguments(text, args, n_captured):
    """Indices of the explicit arguments that remain parameters of the module.

    tf2xla embeds an argument as a constant when an op needs its value at
    compile time (the gradient of a Keras LSTM needs its input so); the
    remaining parameters keep their order. Matched in order by dtype and
    shape.
    """
    from exla._hlo_signature import read_signature

    parameters = read_signature(text).parameters
    n_args = len(parameters) - n_captured
    if n_args == len(args):
        return list(range(len(args)))
    from exla.bridge.tensorflow_call import tf_dtype

    kept, i = [], 0
    for parameter in parameters[:max(n_args, 0)]:
        while i < len(args) and (
                args[i].shape != parameter.dims
                or tf_dtype(parameter).as_numpy_dtype != args[i].dtype):
            i += 1
        if i == len(args):
            break
        kept.append(i)
        i += 1
    if len(kept) != n_args:
        raise RuntimeError(f"cannot match {len(args)} arguments to the "
                           f"module's {n_args} argument parameters")
    return kept


def _tf_program(name, fn, args, *, rtol, atol, long_form=False,
                description="", framework=""):
    """Lowers tf.function `fn` at `args` and runs it for reference outputs."""
    import tensorflow as tf

    args = [np.asarray(a) for a in args]
    cf = fn.get_concrete_function(*args)
    by_handle = {id(v.handle): v for v in cf.variables}
    captured = []
    for c in cf.captured_inputs:
        if c.dtype == tf.resource:
            if id(c) not in by_handle:
                raise RuntimeError(f"{name}: captured resource without variable")
            captured.append(by_handle[id(c)])
        else:
            captured.append(c)
    proto = fn.experimental_get_compiler_ir(*args)(stage="hlo_serialized")
    text = _proto_to_text(proto, long_form=long_form)
    if entry_parameter_count(text) == len(args) + sum(
            isinstance(c, tf.Variable) for c in captured) < len(
                args) + len(captured):
        # tf2xla embeds captured constant tensors (e.g. a GPflow
        # optimizer's gamma) in the module instead of passing them.
        captured = [c for c in captured if isinstance(c, tf.Variable)]
    kept_args = _unfolded_arguments(text, args, len(captured))
    inputs = ([args[i] for i in kept_args]
              + [_np(c) for c in captured])  # variables read now

    _check_parameters(name, text, inputs)

    outputs = [_np(o) for o in tf.nest.flatten(fn(*args))]
    n_own = len(outputs)
    for out_index, param in sorted(_output_aliases(text)):
        if out_index < n_own:
            continue
        if out_index != len(outputs):
            raise RuntimeError(f"{name}: unexpected alias output {out_index}")
        var = captured[param - len(kept_args)]
        if not isinstance(var, tf.Variable):
            raise RuntimeError(f"{name}: output {out_index} aliases a constant")
        outputs.append(_np(var))  # value after the reference call
    return CorpusProgram(name=name, hlo_text=text, inputs=inputs,
                         reference_outputs=outputs, source="tensorflow",
                         rtol=rtol, atol=atol, long_form=long_form,
                         description=description, framework=framework)


def _jax_program(name, f, args, *, rtol, atol, long_form=False,
                 description="", framework="", platforms=None):
    """Lowers jax.jit(f) at `args` and runs it for reference outputs.

    `platforms`: lower for these platforms instead of the default backend
    (jax's cross-platform lowering), e.g. ("tpu",) for linear algebra, whose
    CPU lowering calls jaxlib's LAPACK FFI handlers that TensorFlow's XLA,
    which runs the corpus, does not have; the TPU lowering uses XLA's own
    cholesky and triangular-solve instructions. Reference outputs still come
    from running `f` on the CPU.
    """
    import jax

    jitted = jax.jit(f, keep_unused=True)
    if platforms is None:
        lowered = jitted.lower(*args)
    else:
        lowered = jitted.trace(*args).lower(lowering_platforms=tuple(platforms))
    proto = lowered.compiler_ir("hlo").as_serialized_hlo_module_proto()
    text = _proto_to_text(proto, long_form=long_form)
    inputs = [_np(a) for a in jax.tree_util.tree_leaves(args)]
    _check_parameters(name, text, inputs)
    outputs = [_np(o) for o in jax.tree_util.tree_leaves(jitted(*args))]
    return CorpusProgram(name=name, hlo_text=text, inputs=inputs,
                         reference_outputs=outputs, source="jax",
                         rtol=rtol, atol=atol, long_form=long_form,
                         description=description, framework=framework)


def _rng(seed):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# TensorFlow programs
# --------------------------------------------------------------------------

@_register
def kernel_matvec():
    import tensorflow as tf

    rng = _rng(0)
    x = rng.normal(size=(64, 3))
    y = rng.normal(size=(48, 3))
    v = rng.normal(size=(48, 2))
    lengthscale = tf.Variable(0.7, dtype=tf.float64)

    @tf.function(jit_compile=True)
    def f(x, y, v):
        d = tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
        k = tf.exp(-0.5 * d / lengthscale ** 2)
        return tf.matmul(k, v)

    return _tf_program("kernel_matvec", f, [x, y, v], rtol=1e-12, atol=1e-12,
                       description="Gaussian kernel matrix-vector product, f64")


@_register
def knn_top_k():
    import tensorflow as tf

    rng = _rng(1)
    queries = rng.normal(size=(32, 4)).astype(np.float32)
    points = rng.normal(size=(100, 4)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(q, p):
        d = tf.reduce_sum((q[:, None, :] - p[None, :, :]) ** 2, axis=-1)
        neg, idx = tf.math.top_k(-d, k=5)
        return -neg, idx

    return _tf_program("knn_top_k", f, [queries, points], rtol=1e-6,
                       atol=1e-6,
                       description="k nearest neighbours: distances + top_k")


def _sgpr_model(n, m, d=3, seed=2):
    import gpflow

    rng = _rng(seed)
    x = rng.uniform(size=(n, d))
    y = np.sin(3.0 * x.sum(axis=1, keepdims=True)) + 0.1 * rng.normal(
        size=(n, 1))
    z = x[:m].copy()
    kernel = gpflow.kernels.SquaredExponential(lengthscales=[0.5] * d)
    return gpflow.models.SGPR((x, y), kernel=kernel, inducing_variable=z)


def sgpr_function(n=500, m=50):
    """GPflow SGPR training loss and its gradients, as a jit tf.function."""
    import tensorflow as tf

    model = _sgpr_model(n, m)
    variables = model.trainable_variables

    @tf.function(jit_compile=True)
    def loss_and_grads():
        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return [loss] + list(tape.gradient(loss, variables))

    return loss_and_grads


@_register
def sgpr_loss_and_grads():
    return _tf_program("sgpr_loss_and_grads", sgpr_function(500, 50), [],
                       rtol=1e-9, atol=1e-9,
                       description="GPflow SGPR training_loss + gradients "
                                   "(N=500, M=50), f64", framework="gpflow")


def _attention_block(seed=3):
    import tf_keras as keras

    keras.utils.set_random_seed(seed)
    x_in = keras.Input(shape=(10, 16))
    h = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)(x_in, x_in)
    h = keras.layers.LayerNormalization()(x_in + h)
    f = keras.layers.Dense(32, activation="gelu")(h)
    f = keras.layers.Dense(16)(f)
    out = keras.layers.LayerNormalization()(h + f)
    return keras.Model(x_in, out)


@_register
def attention_forward():
    import tensorflow as tf

    block = _attention_block()
    x = _rng(4).normal(size=(2, 10, 16)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x):
        return block(x)

    return _tf_program("attention_forward", f, [x], rtol=1e-5, atol=1e-5,
                       description="tf_keras Transformer block forward "
                                   "(MultiHeadAttention + LayerNorm + MLP)",
                       framework="tf_keras")


@_register
def attention_backward():
    import tensorflow as tf

    block = _attention_block()
    x = _rng(5).normal(size=(2, 10, 16)).astype(np.float32)
    target = _rng(6).normal(size=(2, 10, 16)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x, target):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_mean((block(x) - target) ** 2)
        grads = tape.gradient(loss, [x] + block.trainable_variables)
        return [loss] + grads

    return _tf_program("attention_backward", f, [x, target], rtol=1e-5,
                       atol=1e-6,
                       description="tf_keras Transformer block: loss and "
                                   "gradients w.r.t. input and weights",
                       framework="tf_keras")


@_register
def mlp_adam_step():
    import tensorflow as tf
    import tf_keras as keras

    keras.utils.set_random_seed(7)
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu", input_shape=(8,)),
        keras.layers.Dense(1),
    ])
    opt = keras.optimizers.Adam(learning_rate=1e-2)
    opt.build(model.trainable_variables)
    rng = _rng(8)
    x = rng.normal(size=(128, 8)).astype(np.float32)
    y = rng.normal(size=(128, 1)).astype(np.float32)

    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return _tf_program("mlp_adam_step", step, [x, y], rtol=1e-5, atol=1e-6,
                       description="tf_keras MLP training step with Adam; "
                                   "updated variables are extra results",
                       framework="tf_keras")


def _while_cond_function():
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def f(x, n):
        def cond(i, x, acc):
            return i < n

        def body(i, x, acc):
            x = tf.cond(tf.reduce_sum(x) > 0.0,
                        lambda: 0.5 * x - 1.0,
                        lambda: x * x + 0.25)
            return i + 1, x, acc + tf.reduce_max(x)

        _, x, acc = tf.while_loop(cond, body,
                                  (tf.constant(0), x, tf.constant(0.0)))
        y = tf.cond(acc > 0.0, lambda: tf.sin(x), lambda: tf.cos(x))
        return y, acc

    return f


@_register
def while_cond():
    x = _rng(9).normal(size=(4, 5)).astype(np.float32)
    return _tf_program("while_cond", _while_cond_function(),
                       [x, np.int32(7)], rtol=1e-6, atol=1e-6,
                       description="tf.while_loop with tf.cond in the body "
                                   "and after the loop")


@_register
def while_cond_long_form():
    x = _rng(10).normal(size=(3, 6)).astype(np.float32)
    return _tf_program("while_cond_long_form", _while_cond_function(),
                       [x, np.int32(5)], rtol=1e-6, atol=1e-6,
                       long_form=True,
                       description="while_cond printed in XLA's long form "
                                   "(% names, signatures, metadata)")


@_register
def stateless_random():
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def f(seed, scale):
        a = tf.random.stateless_normal([16, 8], seed=seed)
        b = tf.random.stateless_uniform([32], seed=seed + 1,
                                        dtype=tf.float64)
        c = tf.random.stateless_uniform([10], seed=seed + 2, minval=-5,
                                        maxval=9, dtype=tf.int32)
        d = tf.random.stateless_truncated_normal([5, 5], seed=seed + 3)
        e = tf.random.stateless_categorical(tf.math.log([[0.2, 0.5, 0.3]]),
                                            8, seed=seed + 4)
        return a * scale, b, c, d, e

    return _tf_program("stateless_random", f,
                       [np.array([3, 11], np.int32), np.float32(2.0)],
                       rtol=1e-6, atol=1e-6,
                       description="stateless random ops (Philox)")


@_register
def integer_ops():
    import tensorflow as tf

    rng = _rng(11)
    a = rng.integers(-1000, 1000, size=(6, 7)).astype(np.int32)
    b = rng.integers(1, 50, size=(6, 7)).astype(np.int32)
    c = rng.integers(0, 2 ** 40, size=(9,)).astype(np.int64)
    u = rng.integers(0, 256, size=(12,)).astype(np.uint8)

    @tf.function(jit_compile=True)
    def f(a, b, c, u):
        r1 = tf.math.floordiv(a, b) + tf.math.floormod(a, b)
        r2 = tf.bitwise.bitwise_xor(a, b) | tf.bitwise.left_shift(b, 3)
        r3 = tf.clip_by_value(tf.abs(a) * tf.sign(a), -500, 500)
        r4 = tf.cumsum(c) // 7 + tf.bitwise.right_shift(c, 5)
        r5 = tf.argmax(tf.cast(a, tf.float32), axis=1)
        r6 = tf.bitwise.invert(u) + u // 3
        r7 = tf.reduce_max(a, axis=0) - tf.reduce_min(b, axis=0)
        r8 = tf.cast(tf.cast(c, tf.int32), tf.uint32) % 1000
        return r1, r2, r3, r4, r5, r6, r7, r8

    return _tf_program("integer_ops", f, [a, b, c, u], rtol=0, atol=0,
                       description="int32/int64/uint8/uint32 arithmetic and "
                                   "bitwise ops")


@_register
def boolean_ops():
    import tensorflow as tf

    rng = _rng(12)
    p = rng.random(size=(5, 8)) > 0.5
    q = rng.random(size=(5, 8)) > 0.3
    x = rng.normal(size=(5, 8)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(p, q, x):
        r = tf.math.logical_xor(p, q) | (tf.logical_not(p) & q)
        s = tf.where(r, x, -x)
        any_ = tf.reduce_any(p, axis=1)
        all_ = tf.reduce_all(q, axis=0)
        cnt = tf.math.count_nonzero(r, axis=1)
        eq = tf.equal(p, x > 0.0)
        return r, s, any_, all_, cnt, eq

    return _tf_program("boolean_ops", f, [p, q, x], rtol=0, atol=0,
                       description="pred (bool) logic, where, any/all")


@_register
def half_precision():
    import tensorflow as tf

    rng = _rng(13)
    a = rng.normal(size=(8, 16)).astype(np.float32)
    b = rng.normal(size=(16, 4)).astype(np.float32)
    h = rng.normal(size=(4, 6)).astype(np.float16)

    @tf.function(jit_compile=True)
    def f(a, b, h):
        ab = tf.matmul(tf.cast(a, tf.bfloat16), tf.cast(b, tf.bfloat16))
        act = tf.nn.relu(ab) * tf.constant(1.5, tf.bfloat16)
        soft = tf.nn.softmax(h * tf.constant(0.5, tf.float16), axis=-1)
        mixed = tf.cast(act, tf.float32) + tf.reduce_sum(
            tf.cast(soft, tf.float32))
        return act, soft, mixed, tf.cast(tf.cast(a, tf.float16) ** 2,
                                         tf.bfloat16)

    return _tf_program("half_precision", f, [a, b, h], rtol=1e-2, atol=1e-2,
                       description="bf16 matmul, f16 softmax, conversions")


@_register
def complex_ops():
    import tensorflow as tf

    rng = _rng(14)
    z = (rng.normal(size=(4, 8)) + 1j * rng.normal(size=(4, 8))).astype(
        np.complex64)
    w = (rng.normal(size=(8, 3)) + 1j * rng.normal(size=(8, 3))).astype(
        np.complex128)
    x = rng.normal(size=(4, 8)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(z, w, x):
        spec = tf.signal.fft(z)
        back = tf.signal.ifft(spec * tf.math.conj(spec))
        mag = tf.abs(back) + tf.math.angle(z)
        zz = tf.complex(x, tf.sin(x)) * z
        ww = tf.matmul(tf.exp(w), w, adjoint_b=True)
        rf = tf.signal.rfft(x)
        return spec, mag, tf.math.real(zz), tf.math.imag(zz), ww, rf

    return _tf_program("complex_ops", f, [z, w, x], rtol=1e-5, atol=1e-5,
                       description="complex64/complex128: fft, conj, abs, "
                                   "complex matmul, rfft")


@_register
def conv_net_grad():
    import tensorflow as tf

    rng = _rng(15)
    images = rng.normal(size=(2, 12, 12, 3)).astype(np.float32)
    w1 = tf.Variable(0.2 * rng.normal(size=(3, 3, 3, 4)).astype(np.float32))
    w2 = tf.Variable(0.2 * rng.normal(size=(36, 5)).astype(np.float32))

    @tf.function(jit_compile=True)
    def f(images):
        with tf.GradientTape() as tape:
            h = tf.nn.conv2d(images, w1, strides=1, padding="SAME")
            h = tf.nn.relu(h)
            h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
            h = tf.nn.avg_pool2d(h, ksize=2, strides=2, padding="VALID")
            logits = tf.reshape(h, [2, -1]) @ w2
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
                tf.one_hot([1, 3], 5), logits))
        return [loss] + tape.gradient(loss, [w1, w2])

    return _tf_program("conv_net_grad", f, [images], rtol=1e-5, atol=1e-6,
                       description="conv2d + max/avg pool + softmax loss "
                                   "and gradients (convolution, "
                                   "reduce-window, select-and-scatter)")


@_register
def gather_scatter_sort():
    import tensorflow as tf

    rng = _rng(16)
    x = rng.normal(size=(10, 6)).astype(np.float32)
    idx = rng.integers(0, 10, size=(7,)).astype(np.int32)
    seg = rng.integers(0, 4, size=(10,)).astype(np.int32)

    @tf.function(jit_compile=True)
    def f(x, idx, seg):
        g = tf.gather(x, idx)
        gnd = tf.gather_nd(x, tf.stack([idx, idx % 6], axis=1))
        sc = tf.tensor_scatter_nd_add(tf.zeros_like(x), idx[:, None], g)
        srt = tf.sort(x, axis=1, direction="DESCENDING")
        arg = tf.argsort(x[:, 0])
        segsum = tf.math.unsorted_segment_sum(x, seg, num_segments=4)
        dyn = tf.roll(x, shift=idx[0], axis=0)
        misc = tf.concat([tf.reverse(x, [0]), tf.pad(x, [[1, 0], [0, 0]])[:10]],
                         axis=1)
        tiled = tf.tile(x[:2], [2, 3])
        return g, gnd, sc, srt, arg, segsum, dyn, misc, tiled, tf.cumsum(x)

    return _tf_program("gather_scatter_sort", f, [x, idx, seg],
                       rtol=1e-6, atol=1e-6,
                       description="gather, gather_nd, scatter, sort, "
                                   "argsort, segment sum, roll by a runtime "
                                   "shift, "
                                   "pad/concat/reverse/tile")


@_register
def linalg_custom_calls():
    import tensorflow as tf

    rng = _rng(17)
    a = rng.normal(size=(6, 6))
    s = a @ a.T + 6.0 * np.eye(6)
    b = rng.normal(size=(6, 2))

    @tf.function(jit_compile=True)
    def f(a, s, b):
        q, r = tf.linalg.qr(a)
        chol = tf.linalg.cholesky(s)
        sol = tf.linalg.cholesky_solve(chol, b)
        inv = tf.linalg.inv(s)
        return (tf.abs(r), q @ r, sol, inv,
                tf.linalg.triangular_solve(chol, b, lower=True))

    return _tf_program("linalg_custom_calls", f, [a, s, b], rtol=1e-9,
                       atol=1e-9,
                       description="QR and inv (custom-calls Qr, "
                                   "ProductOfElementaryHouseholderReflectors"
                                   "), cholesky, triangular solves")


# --------------------------------------------------------------------------
# JAX programs
# --------------------------------------------------------------------------

@_register
def jax_mlp_grad():
    import jax
    import jax.numpy as jnp

    rng = _rng(20)
    params = {
        "w1": rng.normal(size=(6, 32)).astype(np.float32) * 0.3,
        "b1": np.zeros(32, np.float32),
        "w2": rng.normal(size=(32, 1)).astype(np.float32) * 0.3,
    }
    x = rng.normal(size=(40, 6)).astype(np.float32)
    y = rng.normal(size=(40, 1)).astype(np.float32)

    def loss(params, x, y):
        h = jax.nn.gelu(x @ params["w1"] + params["b1"])
        return jnp.mean((h @ params["w2"] - y) ** 2)

    def f(params, x, y):
        return jax.value_and_grad(loss)(params, x, y)

    return _jax_program("jax_mlp_grad", f, (params, x, y), rtol=1e-5,
                        atol=1e-6,
                        description="jax value_and_grad of an MLP loss")


def _jax_control_flow_fn():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def f(x, n):
        def step(carry, row):
            carry = carry * 0.9 + jnp.tanh(row)
            return carry, carry.sum()

        carry, sums = lax.scan(step, jnp.zeros(x.shape[1], x.dtype), x)
        y = lax.cond(sums[-1] > 0, lambda c: c * 2.0, lambda c: -c, carry)
        i, z = lax.while_loop(lambda s: s[0] < n,
                              lambda s: (s[0] + 1, jnp.sqrt(s[1] + 1.0)),
                              (0, y))
        w = lax.fori_loop(0, 4, lambda k, a: a + k * a.mean(), z)
        branch = lax.switch(n % 3, [jnp.sin, jnp.cos, jnp.exp], w)
        return sums, branch, i

    return f


@_register
def jax_control_flow():
    x = _rng(21).normal(size=(7, 5)).astype(np.float32)
    return _jax_program("jax_control_flow", _jax_control_flow_fn(),
                        (x, np.int32(4)), rtol=1e-5, atol=1e-6,
                        description="lax.scan, cond, while_loop, fori_loop, "
                                    "switch")


@_register
def jax_control_flow_long_form():
    x = _rng(22).normal(size=(6, 3)).astype(np.float32)
    return _jax_program("jax_control_flow_long_form", _jax_control_flow_fn(),
                        (x, np.int32(5)), rtol=1e-5, atol=1e-6,
                        long_form=True,
                        description="jax_control_flow in XLA's long form")


@_register
def jax_random():
    import jax

    def f(key, scale):
        k1, k2, k3, k4 = jax.random.split(key, 4)
        n = jax.random.normal(k1, (8, 4)) * scale
        u = jax.random.uniform(k2, (16,), minval=-1.0, maxval=3.0)
        b = jax.random.bernoulli(k3, 0.3, (12,))
        p = jax.random.permutation(k4, 10)
        return n, u, b, p

    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(42)))
    return _jax_program("jax_random", f, (key, np.float32(1.5)), rtol=1e-6,
                        atol=1e-6,
                        description="jax threefry random: normal, uniform, "
                                    "bernoulli, permutation (raw uint32 key)")


@_register
def jax_misc_ops():
    import jax.numpy as jnp
    from jax import lax

    rng = _rng(23)
    x = rng.normal(size=(6, 9)).astype(np.float32)
    k = rng.integers(0, 5, size=(9,)).astype(np.int32)
    i = np.int32(2)

    def f(x, k, i):
        am = jnp.argmax(x, axis=1)
        keys, vals = lax.sort((k, x[0]), num_keys=1)
        cs = jnp.cumsum(x, axis=1)
        cm = lax.cummax(x, axis=0)
        upd = lax.dynamic_update_slice(x, jnp.ones((2, 3), x.dtype), (i, i))
        ds = lax.dynamic_slice(x, (i, 1), (3, 4))
        cl = jnp.clip(x, -0.5, 0.5)
        io = jnp.arange(9) * k
        red = lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (1, 2), "SAME")
        ein = jnp.einsum("ij,kj->ik", x, x, precision=lax.Precision.HIGHEST)
        tv, ti = lax.top_k(x, 3)
        return am, keys, vals, cs, cm, upd, ds, cl, io, red, ein, tv, ti

    return _jax_program("jax_misc_ops", f, (x, k, i), rtol=1e-5, atol=1e-5,
                        description="argmax (variadic reduce), multi-operand "
                                    "sort, cumsum/cummax, dynamic slices, "
                                    "reduce_window, einsum, topk")


@_register
def jax_attention_grad():
    import jax
    import jax.numpy as jnp

    rng = _rng(24)
    q = rng.normal(size=(2, 3, 8, 4)).astype(np.float32)
    kv = rng.normal(size=(2, 3, 8, 4)).astype(np.float32)
    mask = np.tril(np.ones((8, 8), bool))

    def attn(q, kv, mask):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, kv) / jnp.sqrt(4.0)
        s = jnp.where(mask, s, -1e9)
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bhqk,bhkd->bhqd", p, kv)

    def f(q, kv, mask):
        out, vjp = jax.vjp(lambda a, b: attn(a, b, mask), q, kv)
        return (out,) + vjp(jnp.ones_like(out))

    return _jax_program("jax_attention_grad", f, (q, kv, mask), rtol=1e-5,
                        atol=1e-5,
                        description="causal multi-head attention forward and "
                                    "VJP in jax")

