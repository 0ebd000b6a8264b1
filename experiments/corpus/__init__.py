"""Round-trip corpus: real TensorFlow and JAX programs lowered to HLO text.

`tests.corpus.programs` holds the registry; see `programs.names()` and
`programs.get(name)`. Every program is built in the calling process from real
code (GPflow, tf_keras, plain tf.function, jax.jit) at small sizes.
"""
