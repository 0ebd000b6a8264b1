"""Corpus programs from the frameworks' own models, at tiny sizes.

Registered into `experiments.corpus.programs.REGISTRY` when the package is
imported (experiments/corpus/__init__.py). Every program is a framework's model or API
called as a user would: tf_keras applications built with ``weights=None``,
Keras layers, GPflow models with their kernels and natural gradients,
TensorFlow Probability distributions, flax linen modules, optax optimizers,
jax.scipy and lax control flow. Nothing here writes HLO by hand.
"""

from __future__ import annotations

import numpy as np

from .programs import _jax_program, _register, _rng, _tf_program


# --------------------------------------------------------------------------
# tf_keras
# --------------------------------------------------------------------------

def _keras_classifier_programs(name, model, x, labels, *, rtol, atol, what):
    """Forward (inference) and loss+gradient (training mode) of a classifier."""
    import tensorflow as tf
    import tf_keras as keras

    loss_fn = keras.losses.SparseCategoricalCrossentropy()

    if name.endswith("_forward"):
        @tf.function(jit_compile=True)
        def forward(x):
            return model(x, training=False)

        return _tf_program(name, forward, [x], rtol=rtol, atol=atol,
                           framework="tf_keras",
                           description=f"tf_keras {what}, inference forward")

    @tf.function(jit_compile=True)
    def grad(x, labels):
        # training=True: batch statistics, and BatchNormalization assigns its
        # moving averages (extra results aliased to the variables).
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(x, training=True))
        return [loss] + tape.gradient(loss, model.trainable_variables)

    return _tf_program(name, grad, [x, labels], rtol=rtol, atol=atol,
                       framework="tf_keras",
                       description=f"tf_keras {what}, training-mode loss and "
                                   "gradients w.r.t. every weight")


def _mobilenet_v2():
    import tf_keras as keras

    keras.utils.set_random_seed(30)
    return keras.applications.MobileNetV2(
        input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10)


def _image_batch(seed, n=2, size=32):
    rng = _rng(seed)
    return (rng.normal(size=(n, size, size, 3)).astype(np.float32),
            rng.integers(0, 10, size=(n,)).astype(np.int32))


@_register
def keras_mobilenet_v2_forward():
    x, labels = _image_batch(31)
    return _keras_classifier_programs(
        "keras_mobilenet_v2_forward", _mobilenet_v2(), x, labels, rtol=1e-4,
        atol=1e-5, what="MobileNetV2 (weights=None, alpha=0.35, 32x32x3)")


@_register
def keras_mobilenet_v2_grad():
    x, labels = _image_batch(32)
    return _keras_classifier_programs(
        "keras_mobilenet_v2_grad", _mobilenet_v2(), x, labels, rtol=1e-3,
        atol=1e-4, what="MobileNetV2 (weights=None, alpha=0.35, 32x32x3)")


@_register
def keras_resnet50_forward():
    import tf_keras as keras

    keras.utils.set_random_seed(33)
    model = keras.applications.ResNet50(input_shape=(32, 32, 3),
                                        weights=None, classes=10)
    x, labels = _image_batch(34, n=1)
    return _keras_classifier_programs(
        "keras_resnet50_forward", model, x, labels, rtol=1e-4, atol=1e-5,
        what="ResNet50 (weights=None, 32x32x3)")


def _causal_encoder_block(seed):
    """A Transformer encoder block: causal self-attention, LayerNorm, MLP."""
    import tf_keras as keras

    keras.utils.set_random_seed(seed)
    x_in = keras.Input(shape=(8, 16))
    attention = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)
    h = attention(x_in, x_in, use_causal_mask=True)
    h = keras.layers.LayerNormalization()(x_in + h)
    f = keras.layers.Dense(32, activation="relu")(h)
    f = keras.layers.Dense(16)(f)
    out = keras.layers.LayerNormalization()(h + f)
    return keras.Model(x_in, out)


@_register
def keras_causal_encoder_forward():
    import tensorflow as tf

    block = _causal_encoder_block(35)
    x = _rng(36).normal(size=(2, 8, 16)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x):
        return block(x)

    return _tf_program("keras_causal_encoder_forward", f, [x], rtol=1e-5,
                       atol=1e-5, framework="tf_keras",
                       description="tf_keras Transformer encoder block with "
                                   "causal MultiHeadAttention, forward")


@_register
def keras_causal_encoder_grad():
    import tensorflow as tf

    block = _causal_encoder_block(37)
    rng = _rng(38)
    x = rng.normal(size=(2, 8, 16)).astype(np.float32)
    target = rng.normal(size=(2, 8, 16)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x, target):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_mean((block(x) - target) ** 2)
        return [loss] + tape.gradient(loss, [x] + block.trainable_variables)

    return _tf_program("keras_causal_encoder_grad", f, [x, target],
                       rtol=1e-5, atol=1e-6, framework="tf_keras",
                       description="tf_keras causal encoder block: loss and "
                                   "gradients (TF tiles a scalar mask "
                                   "constant: rank-4 constants with index "
                                   "comments)")


def _lstm_model(seed):
    import tf_keras as keras

    keras.utils.set_random_seed(seed)
    return keras.Sequential([
        keras.layers.LSTM(12, return_sequences=True, input_shape=(6, 5)),
        keras.layers.LSTM(8),
        keras.layers.Dense(3),
    ])


@_register
def keras_lstm_forward():
    import tensorflow as tf

    model = _lstm_model(39)
    x = _rng(40).normal(size=(4, 6, 5)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x):
        return model(x)

    return _tf_program("keras_lstm_forward", f, [x], rtol=1e-5, atol=1e-6,
                       framework="tf_keras",
                       description="tf_keras two stacked LSTMs + Dense, "
                                   "forward (while loops)")


@_register
def keras_lstm_grad():
    import tensorflow as tf

    model = _lstm_model(41)
    rng = _rng(42)
    x = rng.normal(size=(4, 6, 5)).astype(np.float32)
    y = rng.normal(size=(4, 3)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        return [loss] + tape.gradient(loss, model.trainable_variables)

    return _tf_program("keras_lstm_grad", f, [x, y], rtol=1e-5, atol=1e-6,
                       framework="tf_keras",
                       description="tf_keras stacked LSTMs: loss and "
                                   "gradients (forward and reverse loops)")


# --------------------------------------------------------------------------
# GPflow
# --------------------------------------------------------------------------

def _gp_data(n, d, seed):
    rng = _rng(seed)
    x = rng.uniform(size=(n, d))
    y = np.sin(4.0 * x[:, :1]) + x[:, 1:2] ** 2 + 0.05 * rng.normal(size=(n, 1))
    return x, y


def _kernel(kind, d):
    import gpflow

    k = gpflow.kernels
    if kind == "se":
        return k.SquaredExponential(lengthscales=[0.6] * d)
    if kind == "matern52":
        return k.Matern52(variance=1.3, lengthscales=[0.5] * d)
    if kind == "periodic":
        return k.Periodic(k.SquaredExponential(lengthscales=[0.7] * d),
                          period=0.8)
    if kind == "sum":
        return k.SquaredExponential(lengthscales=[0.6] * d) + k.Matern52(
            variance=0.5) + k.Linear(variance=0.2)
    if kind == "product":
        return k.SquaredExponential(lengthscales=[0.6] * d) * k.Periodic(
            k.Matern32(), period=1.1)
    raise ValueError(kind)


def _loss_and_grads(model):
    import tensorflow as tf

    variables = model.trainable_variables

    @tf.function(jit_compile=True)
    def f():
        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return [loss] + list(tape.gradient(loss, variables))

    return f


def _predict(model, *, full_cov=False):
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def f(x_new):
        mean, var = model.predict_f(x_new, full_cov=full_cov)
        y_mean, y_var = model.predict_y(x_new)
        return mean, var, y_mean, y_var

    return f


_X_NEW = _rng(49).uniform(size=(15, 2))


@_register
def gpflow_gpr_matern52_grads():
    import gpflow

    model = gpflow.models.GPR(_gp_data(60, 2, 43), kernel=_kernel("matern52", 2))
    return _tf_program("gpflow_gpr_matern52_grads", _loss_and_grads(model),
                       [], rtol=1e-9, atol=1e-9, framework="gpflow",
                       description="GPflow GPR, Matern52 kernel: training "
                                   "loss and gradients, f64")


@_register
def gpflow_gpr_periodic_predict():
    import gpflow

    model = gpflow.models.GPR(_gp_data(50, 2, 44), kernel=_kernel("periodic", 2))
    return _tf_program("gpflow_gpr_periodic_predict", _predict(model),
                       [_X_NEW], rtol=1e-9, atol=1e-9, framework="gpflow",
                       description="GPflow GPR, Periodic(SE) kernel: "
                                   "predict_f and predict_y, f64")


@_register
def gpflow_sgpr_sum_kernel():
    import gpflow

    x, y = _gp_data(80, 2, 45)
    model = gpflow.models.SGPR((x, y), kernel=_kernel("sum", 2),
                               inducing_variable=x[::8].copy())
    return _tf_program("gpflow_sgpr_sum_kernel", _loss_and_grads(model), [],
                       rtol=1e-9, atol=1e-9, framework="gpflow",
                       description="GPflow SGPR, SE + Matern52 + Linear sum "
                                   "kernel: loss and gradients, f64")


@_register
def gpflow_sgpr_sum_kernel_predict():
    import gpflow

    x, y = _gp_data(80, 2, 46)
    model = gpflow.models.SGPR((x, y), kernel=_kernel("sum", 2),
                               inducing_variable=x[::8].copy())
    return _tf_program("gpflow_sgpr_sum_kernel_predict",
                       _predict(model, full_cov=True), [_X_NEW], rtol=1e-9,
                       atol=1e-9, framework="gpflow",
                       description="GPflow SGPR, sum kernel: predict_f "
                                   "(full covariance) and predict_y, f64")


def _natgrad_step(model, variational, *, data=None):
    """One natural-gradient step on the variational parameters, then the loss."""
    import gpflow
    import tensorflow as tf

    for v in variational:
        gpflow.set_trainable(v, False)
    opt = gpflow.optimizers.NaturalGradient(gamma=0.5)
    loss = (model.training_loss_closure(data) if data is not None
            else model.training_loss)

    @tf.function(jit_compile=True)
    def step():
        opt.minimize(loss, var_list=[tuple(variational)])
        return loss()

    return step


@_register
def gpflow_svgp_product_natgrad():
    import gpflow

    x, y = _gp_data(64, 2, 47)
    model = gpflow.models.SVGP(_kernel("product", 2),
                               gpflow.likelihoods.Gaussian(variance=0.1),
                               inducing_variable=x[::8].copy(), num_data=64)
    step = _natgrad_step(model, [model.q_mu, model.q_sqrt], data=(x, y))
    return _tf_program("gpflow_svgp_product_natgrad", step, [], rtol=1e-8,
                       atol=1e-9, framework="gpflow",
                       description="GPflow SVGP, SE x Periodic(Matern32) "
                                   "kernel: one NaturalGradient step on "
                                   "(q_mu, q_sqrt), f64")


@_register
def gpflow_svgp_predict():
    import gpflow

    x, y = _gp_data(64, 2, 48)
    model = gpflow.models.SVGP(_kernel("se", 2),
                               gpflow.likelihoods.Gaussian(variance=0.1),
                               inducing_variable=x[::8].copy(), num_data=64)
    return _tf_program("gpflow_svgp_predict", _predict(model, full_cov=True),
                       [_X_NEW], rtol=1e-9, atol=1e-9, framework="gpflow",
                       description="GPflow SVGP, SE kernel: predict_f (full "
                                   "covariance) and predict_y, f64")


@_register
def gpflow_vgp_natgrad():
    import gpflow

    x, y = _gp_data(30, 2, 50)
    model = gpflow.models.VGP((x, y), kernel=_kernel("matern52", 2),
                              likelihood=gpflow.likelihoods.Gaussian(0.1))
    step = _natgrad_step(model, [model.q_mu, model.q_sqrt])
    return _tf_program("gpflow_vgp_natgrad", step, [], rtol=1e-8, atol=1e-9,
                       framework="gpflow",
                       description="GPflow VGP, Matern52 kernel: one "
                                   "NaturalGradient step, f64")


# --------------------------------------------------------------------------
# TensorFlow Probability
# --------------------------------------------------------------------------

@_register
def tfp_log_probs():
    import tensorflow as tf
    import tensorflow_probability as tfp

    tfd = tfp.distributions
    rng = _rng(51)
    x = rng.normal(size=(6,)).astype(np.float32)
    pos = rng.uniform(0.1, 3.0, size=(6,)).astype(np.float32)
    unit = rng.uniform(0.05, 0.95, size=(6,)).astype(np.float32)
    simplex = rng.dirichlet(np.ones(4), size=3).astype(np.float32)
    counts = rng.integers(0, 9, size=(6,)).astype(np.float32)
    a = rng.normal(size=(4, 4)).astype(np.float32)
    scale_tril = np.tril(a, -1) * 0.3 + np.diag(np.abs(np.diag(a)) + 0.5)
    mvn_x = rng.normal(size=(5, 4)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x, pos, unit, simplex, counts, scale_tril, mvn_x):
        mixture = tfd.MixtureSameFamily(
            tfd.Categorical(logits=[0.1, -0.3, 0.7]),
            tfd.Normal(loc=[-1.0, 0.0, 2.0], scale=[0.5, 1.0, 0.8]))
        return (tfd.Normal(0.3, 1.2).log_prob(x),
                tfd.StudentT(df=3.5, loc=0.1, scale=0.9).log_prob(x),
                tfd.Gamma(concentration=2.0, rate=1.5).log_prob(pos),
                tfd.Beta(2.5, 1.5).log_prob(unit),
                tfd.Dirichlet([1.5, 2.0, 0.7, 3.0]).log_prob(simplex),
                tfd.Poisson(rate=3.0).log_prob(counts),
                tfd.MultivariateNormalTriL(loc=tf.zeros(4),
                                           scale_tril=scale_tril).log_prob(mvn_x),
                mixture.log_prob(x))

    return _tf_program("tfp_log_probs", f,
                       [x, pos, unit, simplex, counts, scale_tril, mvn_x],
                       rtol=1e-5, atol=1e-5, framework="tfp",
                       description="TFP log_prob: Normal, StudentT, Gamma, "
                                   "Beta, Dirichlet, Poisson, "
                                   "MultivariateNormalTriL, "
                                   "MixtureSameFamily")


@_register
def tfp_log_prob_grads():
    import tensorflow as tf
    import tensorflow_probability as tfp

    tfd = tfp.distributions
    rng = _rng(52)
    x = rng.uniform(0.2, 2.0, size=(10,))
    params = np.array([1.5, 0.8, 0.3])

    @tf.function(jit_compile=True)
    def f(x, params):
        with tf.GradientTape() as tape:
            tape.watch(params)
            conc, rate, loc = tf.unstack(params)
            lp = (tf.reduce_sum(tfd.Gamma(conc, rate).log_prob(x))
                  + tf.reduce_sum(tfd.LogNormal(loc, rate).log_prob(x))
                  + tf.reduce_sum(tfd.Weibull(conc, rate).log_prob(x)))
        return lp, tape.gradient(lp, params)

    return _tf_program("tfp_log_prob_grads", f, [x, params], rtol=1e-9,
                       atol=1e-9, framework="tfp",
                       description="TFP Gamma, LogNormal, Weibull log_prob "
                                   "and gradients w.r.t. parameters "
                                   "(lgamma, digamma), f64")


# --------------------------------------------------------------------------
# JAX: flax, optax, jax.scipy, lax control flow
# --------------------------------------------------------------------------

def _flax_cnn():
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train: bool):
            x = nn.Conv(8, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.relu(x)
            x = nn.avg_pool(x, (2, 2), strides=(2, 2))
            x = nn.Conv(12, (3, 3), strides=(2, 2))(x)
            x = nn.LayerNorm()(nn.gelu(x))
            x = x.reshape((x.shape[0], -1))
            return nn.Dense(5)(nn.Dropout(0.5, deterministic=True)(x))

    return CNN()


@_register
def flax_cnn_forward():
    import jax

    model = _flax_cnn()
    x = _rng(53).normal(size=(2, 12, 12, 3)).astype(np.float32)
    variables = model.init(jax.random.PRNGKey(0), x, train=False)

    def f(variables, x):
        return model.apply(variables, x, train=False)

    return _jax_program("flax_cnn_forward", f, (variables, x), rtol=1e-5,
                        atol=1e-5, framework="flax",
                        description="flax linen CNN (Conv, BatchNorm, "
                                    "avg_pool, LayerNorm, Dense), inference")


@_register
def flax_cnn_train_grad():
    import jax
    import jax.numpy as jnp
    import optax

    model = _flax_cnn()
    rng = _rng(54)
    x = rng.normal(size=(4, 12, 12, 3)).astype(np.float32)
    labels = rng.integers(0, 5, size=(4,)).astype(np.int32)
    variables = model.init(jax.random.PRNGKey(1), x, train=False)

    def f(variables, x, labels):
        def loss(params):
            logits, updates = model.apply(
                {"params": params, "batch_stats": variables["batch_stats"]},
                x, train=True, mutable=["batch_stats"])
            return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(
                logits, labels)), updates

        (value, updates), grads = jax.value_and_grad(loss, has_aux=True)(
            variables["params"])
        return value, grads, updates

    return _jax_program("flax_cnn_train_grad", f, (variables, x, labels),
                        rtol=1e-4, atol=1e-5, framework="flax",
                        description="flax linen CNN, training mode: loss, "
                                    "gradients and updated batch statistics")


@_register
def flax_attention_grad():
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
            h = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8)(
                x, mask=mask)
            x = nn.LayerNorm()(x + h)
            return x + nn.Dense(x.shape[-1])(nn.swish(nn.Dense(16)(x)))

    model = Block()
    x = _rng(55).normal(size=(2, 6, 8)).astype(np.float32)
    params = model.init(jax.random.PRNGKey(2), x)

    def f(params, x):
        return jax.value_and_grad(lambda p: jnp.sum(model.apply(p, x) ** 2))(
            params)

    return _jax_program("flax_attention_grad", f, (params, x), rtol=1e-4,
                        atol=1e-5, framework="flax",
                        description="flax linen causal MultiHeadDotProduct"
                                    "Attention block: value and gradients")


def _mlp_params(seed):
    rng = _rng(seed)
    return {"w1": (0.3 * rng.normal(size=(5, 16))).astype(np.float32),
            "b1": np.zeros(16, np.float32),
            "w2": (0.3 * rng.normal(size=(16, 2))).astype(np.float32)}


def _mlp_loss(params, x, y):
    import jax
    import jax.numpy as jnp

    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


@_register
def optax_update_steps():
    import jax
    import optax

    params = _mlp_params(56)
    rng = _rng(57)
    x = rng.normal(size=(20, 5)).astype(np.float32)
    y = rng.normal(size=(20, 2)).astype(np.float32)
    optimizers = {
        "adam": optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2)),
        "adamw": optax.adamw(1e-2, weight_decay=1e-3),
        "sgd": optax.sgd(1e-2, momentum=0.9, nesterov=True),
        "rmsprop": optax.rmsprop(1e-3),
        "lamb": optax.lamb(1e-3),
        "adagrad": optax.adagrad(1e-2),
    }
    states = {k: opt.init(params) for k, opt in optimizers.items()}

    def f(params, states, x, y):
        grads = jax.grad(_mlp_loss)(params, x, y)
        out = {}
        for k, opt in optimizers.items():
            updates, state = opt.update(grads, states[k], params)
            out[k] = (optax.apply_updates(params, updates), state)
        return out

    return _jax_program("optax_update_steps", f, (params, states, x, y),
                        rtol=1e-5, atol=1e-6, framework="optax",
                        description="optax update steps (adam with global "
                                    "norm clipping, adamw, nesterov sgd, "
                                    "rmsprop, lamb, adagrad) on MLP "
                                    "gradients")


@_register
def jax_scipy_special():
    import jax.numpy as jnp
    import jax.scipy.special as jss

    x = np.linspace(0.1, 4.0, 12, dtype=np.float32)
    m = _rng(58).normal(size=(3, 5)).astype(np.float32)

    def f(x, m):
        return (jss.gammaln(x), jss.digamma(x), jss.erf(x - 2.0),
                jss.erfc(x - 2.0), jss.erfinv(x / 5.0), jss.ndtri(x / 5.0),
                jss.logsumexp(m, axis=1), jss.xlogy(x, x), jss.expit(m),
                jss.i0e(x), jss.i1e(x), jss.betaln(x, x + 1.0),
                jss.gammainc(x, x + 0.5), jss.log_ndtr(m),
                jss.softmax(m, axis=0), jnp.sinc(m))

    return _jax_program("jax_scipy_special", f, (x, m), rtol=1e-4,
                        atol=1e-5,
                        description="jax.scipy.special: gammaln, digamma, "
                                    "erf(c/inv), ndtri, logsumexp, xlogy, "
                                    "i0e/i1e, betaln, gammainc, log_ndtr")


@_register
def jax_scipy_linalg():
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    rng = _rng(59)
    a = rng.normal(size=(6, 6))
    spd = a @ a.T + 6.0 * np.eye(6)
    b = rng.normal(size=(6, 3))

    def f(spd, b):
        factor = jsl.cho_factor(spd, lower=True)
        x = jsl.cho_solve(factor, b)
        low = jsl.cholesky(spd, lower=True)
        t = jsl.solve_triangular(low, b, lower=True)
        tt = jsl.solve_triangular(low, t, trans=1, lower=True)
        logdet = 2.0 * jnp.sum(jnp.log(jnp.diag(low)))
        return x, t, tt, logdet, jsl.block_diag(low[:2, :2], spd[:3, :3])

    from exla.bridge.jax import enable_x64

    with enable_x64():
        return _jax_program("jax_scipy_linalg", f, (spd, b), rtol=1e-9,
                            atol=1e-9, platforms=("tpu",),
                            description="jax.scipy.linalg cho_factor/"
                                        "cho_solve, cholesky, "
                                        "solve_triangular, block_diag, f64 "
                                        "(XLA cholesky and triangular-solve "
                                        "instructions: lowered for TPU)")


@_register
def jax_scan_rnn_grad():
    import jax
    import jax.numpy as jnp
    from jax import lax

    rng = _rng(60)
    w = (0.4 * rng.normal(size=(6, 6))).astype(np.float32)
    u = (0.4 * rng.normal(size=(3, 6))).astype(np.float32)
    xs = rng.normal(size=(9, 3)).astype(np.float32)

    def loss(w, u, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, jnp.sum(h ** 2)

        h, energies = lax.scan(cell, jnp.zeros(6, xs.dtype), xs)
        return jnp.sum(energies) + jnp.sum(h)

    def f(w, u, xs):
        return jax.value_and_grad(loss, argnums=(0, 1))(w, u, xs)

    return _jax_program("jax_scan_rnn_grad", f, (w, u, xs), rtol=1e-5,
                        atol=1e-5,
                        description="lax.scan RNN and its gradient (a "
                                    "reverse scan)")


@_register
def jax_while_newton():
    import jax.numpy as jnp
    from jax import lax

    a = _rng(61).uniform(0.5, 9.0, size=(7,)).astype(np.float64)

    def f(a):
        def cond(state):
            x, i, err = state
            return (err > 1e-12) & (i < 50)

        def body(state):
            x, i, _ = state
            new = lax.cond(i % 2 == 0,
                           lambda x: 0.5 * (x + a / x),
                           lambda x: x - (x * x - a) / (2.0 * x), x)
            return new, i + 1, jnp.max(jnp.abs(new - x))

        x, i, err = lax.while_loop(cond, body, (a, 0, jnp.inf))
        return x, i, err

    from exla.bridge.jax import enable_x64

    with enable_x64():
        return _jax_program("jax_while_newton", f, (a,), rtol=1e-12,
                            atol=1e-12,
                            description="lax.while_loop Newton iteration "
                                        "with a data-dependent stop and "
                                        "lax.cond in the body, f64")


@_register
def jax_shard_map():
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec

    try:
        from jax import shard_map
    except ImportError:  # jax < 0.7
        from jax.experimental.shard_map import shard_map

    # One device: the pytest process cannot have the 8 CPU devices of
    # XLA_FLAGS=--xla_force_host_platform_device_count=8, which must be set
    # before jax starts (tests/python/jax/test_sharded.py runs a child for
    # that). On one device the collectives stay: all-reduce (psum, pmax).
    # (all_gather would too, but TensorFlow's XlaCallModule, which runs the
    # corpus, gives XLA no device assignment for it.)
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    rng = _rng(62)
    a = rng.normal(size=(32, 8)).astype(np.float32)
    w = rng.normal(size=(8, 16)).astype(np.float32)

    def f(a, w):
        def block(a, w):
            h = jnp.tanh(a @ w)
            total = jax.lax.psum(jnp.sum(h * h), "x")
            largest = jax.lax.pmax(jnp.max(h, axis=0), "x")
            return h / jnp.sqrt(total), largest

        return shard_map(block, mesh=mesh,
                         in_specs=(PartitionSpec("x"), PartitionSpec()),
                         out_specs=(PartitionSpec("x"), PartitionSpec()))(a, w)

    return _jax_program("jax_shard_map", f, (a, w), rtol=1e-5, atol=1e-6,
                        description="shard_map over a one-device mesh with "
                                    "psum and pmax (all-reduce in the "
                                    "module)")
