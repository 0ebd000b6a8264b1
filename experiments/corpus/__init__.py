"""The HLO corpus: real TensorFlow and JAX programs lowered to HLO text.

`experiments.corpus.programs` holds the registry; see `programs.names()` and
`programs.get(name)`. Every program is built in the calling process from real
code (GPflow, tf_keras, plain tf.function, jax.jit) at small sizes.

It lives here, not under tests/, because the tests (the IR, analysis and pass
tests) and the tools (`corpus_report`, `memory_model`, `optimizer_replay`)
both read it, and tests may import experiments but not the other way round.
It imports neither pytest nor anything of tests/: a program whose framework
is not installed raises `programs.MissingFramework`, which the tests' conftest
turns into their environment's skip or failure.

Importing the package registers every program: programs.py holds the
registry and the programs written for the corpus, and the two modules below
add the frameworks' own models and the constants of every rank and type
(they use programs.py's helpers, so programs.py cannot import them).

`heldout` is apart: the memory model's held-out modules, stored as HLO files
(`heldout_modules/`) and never registered with the corpus, so that no tool
or test tunes anything against them.
"""

from . import constants, frameworks, programs  # noqa: F401  (registers the programs)
