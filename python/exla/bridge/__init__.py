"""exla's glue to XLA's Python distributions: each private API has one owner here.

* :mod:`exla.bridge.xla` — HLO text <-> ``HloModuleProto``, StableHLO portable
  artifacts and XLA's planned memory, through jaxlib. It is the only module of
  exla that touches jaxlib's private APIs.
* :mod:`exla.bridge.jax` — the one module that uses JAX's private API: the
  compile step every ``jax.jit`` program passes through, where exla's hook sits.
* :mod:`exla.bridge.tensorflow` — the one module that uses TensorFlow's
  private API (``tensorflow.python``): the ``tf.function`` class exla patches,
  XLA-cluster detection, the tape's pause, a concrete function's HLO.
* :mod:`exla.bridge.tensorflow_call` — runs an HLO module with TensorFlow's own
  XLA: the one owner of the ``XlaCallModule`` op and of the rule that picks
  its platform, used by ``call_hlo`` and by ``exla.function`` alike.
* :mod:`exla.bridge.versions` — the supported version ranges (``setup.py``
  reads them too).

The bridge imports jax, jaxlib and TensorFlow on first use: ``import exla``
loads neither jax nor TensorFlow, and each module imports without them.
"""
