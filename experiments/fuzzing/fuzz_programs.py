"""Random programs for the differential fuzzer (:mod:`experiments.fuzzing.fuzz`).

A program is a short, seeded sequence of the operations people write in
TensorFlow and JAX models: a producer of a large pairwise matrix (squared
distances in broadcast form, a Gram matrix, an outer sum), a few transforms of
it (elementwise functions, broadcasts against its own row or column
statistics, softmax, select, top-k, transpose, reshape, concatenate) and
usually a consumer (a reduction or a product with a thin matrix), optionally
differentiated (``tf.GradientTape`` / ``jax.grad``). Sizes are chosen so that
the pairwise intermediates exceed the small thresholds the fuzzer uses, which
forces exla's splitter to act.

The same program can be built in float32 and float64, for either frontend, so
that a float32 program has a float64 twin to serve as its reference.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

import numpy as np

FRONTENDS = ("tf", "jax")
DTYPES = ("float32", "float64")

# Thresholds in bytes: every pairwise intermediate of the sizes below is larger.
THRESHOLDS = (8 << 10, 32 << 10, 128 << 10)

UNARY = ("gauss", "exp_tanh", "log1p_sq", "tanh", "sqrt1p_sq", "affine")


@dataclasses.dataclass
class Program:
    """One generated program: everything needed to rebuild it exactly."""

    seed: int
    frontend: str
    dtype: str
    inputs: list[tuple[int, ...]]  # shapes of X, Y, V, W (R is added for gradients)
    steps: list[list[Any]]  # [op, operand value indices..., params]
    output: int  # value index of the result
    grad: bool
    threshold: int
    split_size: int | None

    def ops(self) -> list[str]:
        """The op kinds the program uses (its categories), in order, without repeats."""
        seen: list[str] = []
        for step in self.steps:
            name = step[0] if step[0] != "unary" else f"unary:{step[2]}"
            if name not in seen:
                seen.append(name)
        if self.grad:
            seen.append("grad")
        return seen

    def describe(self) -> str:
        parts = []
        for step in self.steps:
            parts.append(step[0] + "(" + ",".join(str(a) for a in step[1:]) + ")")
        return (f"{self.frontend} {self.dtype} inputs={self.inputs} "
                f"{' -> '.join(parts)}{' +grad' if self.grad else ''} "
                f"threshold={self.threshold} split_size={self.split_size}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    def twin(self, dtype: str) -> "Program":
        """The same program in another precision."""
        return dataclasses.replace(self, dtype=dtype)


def generate(seed: int) -> Program:
    """The program of `seed` (deterministic)."""
    rng = np.random.default_rng(seed)
    frontend = FRONTENDS[int(rng.integers(2))]
    dtype = DTYPES[int(rng.random() < 0.3)]  # float32 mostly: it has a float64 reference
    n, m = (int(v) for v in rng.integers(48, 320, size=2))
    if rng.random() < 0.3:
        n -= n % 7 - 1  # dimensions with awkward factors exercise the remainders
    d = int(rng.choice([1, 2, 3, 4, 8, 16]))
    k = int(rng.choice([1, 2, 4, 8]))
    inputs = [(n, d), (m, d), (m, k), (n, k)]
    shapes: list[tuple[int, ...]] = list(inputs)
    steps: list[list[Any]] = []

    def add(step: list[Any], shape: tuple[int, ...]) -> int:
        steps.append(step)
        shapes.append(shape)
        return len(shapes) - 1

    other = 0 if rng.random() < 0.2 else 1  # distances of X with itself, sometimes
    producer = rng.choice(["sqdist", "gram", "gram_einsum", "outer_add"])
    cur = add([str(producer), 0, other], (n, shapes[other][0]))

    for _ in range(int(rng.integers(0, 4))):
        r, c = shapes[cur]
        choices = ["unary", "unary", "center", "softmax", "where", "transpose"]
        if r % 2 == 0:
            choices.append("reshape")
        if r * c < 200_000:
            choices.append("concat")
        if c >= 4:
            choices.append("top_k")
        op = str(rng.choice(choices))
        if op == "unary":
            cur = add(["unary", cur, str(rng.choice(UNARY))], (r, c))
        elif op == "center":
            reducer = str(rng.choice(["max", "mean", "sum"]))
            axis = int(rng.integers(2))
            binop = str(rng.choice(["sub", "mul", "add"]))
            cur = add(["center", cur, reducer, axis, binop], (r, c))
        elif op == "softmax":
            cur = add(["softmax", cur, int(rng.integers(2))], (r, c))
        elif op == "where":
            cur = add(["where", cur], (r, c))
        elif op == "transpose":
            cur = add(["transpose", cur], (c, r))
        elif op == "reshape":
            cur = add(["reshape", cur], (r // 2, 2 * c))
        elif op == "concat":
            axis = int(rng.integers(2))
            cur = add(["concat", cur, axis], (2 * r, c) if axis == 0 else (r, 2 * c))
        elif op == "top_k":
            kk = int(rng.choice([1, 3, min(8, c)]))
            cur = add(["top_k", cur, kk], (r, kk))

    r, c = shapes[cur]
    consumer = rng.random()
    projector = next((i for i in (2, 3) if inputs[i][0] == c), None)
    if consumer < 0.4:
        kind = str(rng.choice(["sum", "max", "mean"]))
        axis = int(rng.integers(3)) - 1  # -1: every axis
        shape = () if axis == -1 else ((c,) if axis == 0 else (r,))
        cur = add(["reduce", cur, kind, axis], shape)
    elif consumer < 0.8 and projector is not None:
        how = str(rng.choice(["matmul", "einsum"]))
        cur = add([how, cur, projector], (r, inputs[projector][1]))
    if shapes[cur] and rng.random() < 0.3:
        cur = add(["unary", cur, str(rng.choice(UNARY))], shapes[cur])

    grad = bool(rng.random() < 0.35)
    if grad:
        inputs.append(shapes[cur])  # R: the weights of the scalar loss sum(out * R)
    threshold = int(rng.choice(THRESHOLDS))
    split_size = None if rng.random() < 0.6 else threshold // int(rng.choice([2, 4, 8]))
    return Program(seed, frontend, dtype, inputs, steps, cur, grad, threshold, split_size)


def make_inputs(program: Program, draw: int = 0) -> list[np.ndarray]:
    """The program's arguments (float64 draws rounded to the program's dtype).

    `draw` 0 gives the program's own inputs; other draws give other inputs of
    the same shapes and distribution (the fuzzer's second look at a program).
    """
    rng = np.random.default_rng(program.seed + 1 if draw == 0 else [program.seed, draw])
    arrays = []
    for i, shape in enumerate(program.inputs):
        scale = 1.0 / np.sqrt(shape[1]) if i < 2 else 1.0
        arrays.append((rng.standard_normal(shape) * scale).astype(program.dtype))
    return arrays


# ----- frontends ---------------------------------------------------------------------


class _TfOps:
    def __init__(self) -> None:
        import tensorflow as tf

        self.tf = tf

    def unary(self, a, fn):
        tf = self.tf
        return {
            "gauss": lambda: tf.exp(-0.5 * a * a),
            "exp_tanh": lambda: tf.exp(2.0 * tf.tanh(a)),
            "log1p_sq": lambda: tf.math.log(1.0 + a * a),
            "tanh": lambda: tf.tanh(a),
            "sqrt1p_sq": lambda: tf.sqrt(a * a + 1.0),
            "affine": lambda: 0.7 * a + 0.3,
        }[fn]()

    def reduce(self, a, kind, axis, keepdims=False):
        f = {"sum": self.tf.reduce_sum, "max": self.tf.reduce_max,
             "mean": self.tf.reduce_mean}[kind]
        return f(a, axis=None if axis == -1 else axis, keepdims=keepdims)

    def sqdist(self, x, y):
        tf = self.tf
        diff = tf.expand_dims(x, 1) - tf.expand_dims(y, 0)
        return tf.reduce_sum(diff * diff, axis=2)

    def gram(self, x, y):
        return self.tf.matmul(x, y, transpose_b=True)

    def einsum(self, spec, a, b):
        return self.tf.einsum(spec, a, b)

    def softmax(self, a, axis):
        return self.tf.nn.softmax(a, axis=axis)

    def where(self, cond, a, b):
        return self.tf.where(cond, a, b)

    def transpose(self, a):
        return self.tf.transpose(a)

    def reshape(self, a, shape):
        return self.tf.reshape(a, shape)

    def concat(self, parts, axis):
        return self.tf.concat(parts, axis=axis)

    def top_k(self, a, k):
        return self.tf.math.top_k(a, k=k).values

    def matmul(self, a, b):
        return self.tf.matmul(a, b)


class _JaxOps(_TfOps):
    def __init__(self) -> None:  # noqa: D107  (shares nothing with TensorFlow)
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp

    def unary(self, a, fn):
        jnp = self.jnp
        return {
            "gauss": lambda: jnp.exp(-0.5 * a * a),
            "exp_tanh": lambda: jnp.exp(2.0 * jnp.tanh(a)),
            "log1p_sq": lambda: jnp.log(1.0 + a * a),
            "tanh": lambda: jnp.tanh(a),
            "sqrt1p_sq": lambda: jnp.sqrt(a * a + 1.0),
            "affine": lambda: 0.7 * a + 0.3,
        }[fn]()

    def reduce(self, a, kind, axis, keepdims=False):
        f = {"sum": self.jnp.sum, "max": self.jnp.max, "mean": self.jnp.mean}[kind]
        return f(a, axis=None if axis == -1 else axis, keepdims=keepdims)

    def sqdist(self, x, y):
        diff = x[:, None, :] - y[None, :, :]
        return self.jnp.sum(diff * diff, axis=2)

    def gram(self, x, y):
        return x @ y.T

    def einsum(self, spec, a, b):
        return self.jnp.einsum(spec, a, b)

    def softmax(self, a, axis):
        return self.jax.nn.softmax(a, axis=axis)

    def where(self, cond, a, b):
        return self.jnp.where(cond, a, b)

    def transpose(self, a):
        return a.T

    def reshape(self, a, shape):
        return self.jnp.reshape(a, shape)

    def concat(self, parts, axis):
        return self.jnp.concatenate(parts, axis=axis)

    def top_k(self, a, k):
        return self.jax.lax.top_k(a, k)[0]

    def matmul(self, a, b):
        return a @ b


def _evaluate(program: Program, ops: _TfOps, args: list) -> Any:
    values = list(args[:4])
    for step in program.steps:
        op, a = step[0], values[step[1]]
        if op == "sqdist":
            out = ops.sqdist(a, values[step[2]])
        elif op == "gram":
            out = ops.gram(a, values[step[2]])
        elif op == "gram_einsum":
            out = ops.einsum("nd,md->nm", a, values[step[2]])
        elif op == "outer_add":
            col = ops.reduce(a, "sum", 1, keepdims=True)
            row = ops.reduce(values[step[2]], "sum", 1, keepdims=True)
            out = col + ops.transpose(row)
        elif op == "unary":
            out = ops.unary(a, step[2])
        elif op == "center":
            _, _, reducer, axis, binop = step
            stat = ops.reduce(a, reducer, axis, keepdims=True)
            out = {"sub": lambda: a - stat, "mul": lambda: a * stat,
                   "add": lambda: a + stat}[binop]()
        elif op == "softmax":
            out = ops.softmax(a, step[2])
        elif op == "where":
            out = ops.where(a > ops.reduce(a, "mean", -1, keepdims=True), a, 0.5 * a)
        elif op == "transpose":
            out = ops.transpose(a)
        elif op == "reshape":
            r, c = a.shape
            out = ops.reshape(a, (int(r) // 2, 2 * int(c)))
        elif op == "concat":
            out = ops.concat([a, 0.5 * a], step[2])
        elif op == "top_k":
            out = ops.top_k(a, step[2])
        elif op == "reduce":
            out = ops.reduce(a, step[2], step[3])
        elif op == "matmul":
            out = ops.matmul(a, values[step[2]])
        elif op == "einsum":
            out = ops.einsum("rc,ck->rk", a, values[step[2]])
        else:
            raise ValueError(f"unknown step {op!r}")
        values.append(out)
    return values[program.output]


def build(program: Program) -> Callable[..., Any]:
    """The program as a Python function of its inputs, in its frontend.

    With ``grad`` it returns ``(out, d loss / d X)`` for ``loss = sum(out * R)``.
    """
    if program.frontend == "tf":
        ops = _TfOps()
        tf = ops.tf

        def tf_fn(*args):
            if not program.grad:
                return _evaluate(program, ops, args)
            with tf.GradientTape() as tape:
                tape.watch(args[0])
                out = _evaluate(program, ops, args)
                loss = tf.reduce_sum(out * args[4])
            return out, tape.gradient(loss, args[0])

        return tf_fn
    ops = _JaxOps()
    jax, jnp = ops.jax, ops.jnp

    def jax_fn(*args):
        if not program.grad:
            return _evaluate(program, ops, args)

        def loss(x):
            out = _evaluate(program, ops, (x,) + tuple(args[1:]))
            return jnp.sum(out * args[4]), out

        g, out = jax.grad(loss, has_aux=True)(args[0])
        return out, g

    return jax_fn


def lower(program: Program, args: list[np.ndarray]) -> str:
    """HLO text of the jit-compiled program at `args`."""
    from exla.bridge import xla

    fn = build(program)
    if program.frontend == "tf":
        import tensorflow as tf

        compiled = tf.function(fn, jit_compile=True, autograph=False)
        proto = compiled.experimental_get_compiler_ir(*args)(stage="hlo_serialized")
        return xla.proto_to_text(proto)
    import jax

    lowered = jax.jit(fn, keep_unused=True).lower(*args)
    return xla.proto_to_text(lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())


def run_direct(program: Program, *arg_sets: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Runs the program through its frontend's own jit (the reference path),
    once per argument set, compiling once."""
    fn = build(program)
    if program.frontend == "tf":
        import tensorflow as tf

        compiled = tf.function(fn, jit_compile=True, autograph=False)
    else:
        import jax

        compiled = jax.jit(fn, keep_unused=True)
    results = []
    for args in arg_sets:
        out = compiled(*args)
        outs = out if isinstance(out, (tuple, list)) else [out]
        results.append([np.asarray(o) for o in outs])
    return results
