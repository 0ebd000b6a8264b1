"""exla's glue to XLA's Python distributions.

* :mod:`exla.bridge.xla` — HLO text <-> ``HloModuleProto``, StableHLO portable
  artifacts and XLA's planned memory, through jaxlib. It is the only module of
  exla that touches jaxlib's private APIs.
* :mod:`exla.bridge.tensorflow_call` — runs an HLO module with TensorFlow's own
  XLA (``XlaCallModule``).

Both are imported lazily: ``import exla`` loads neither jax nor TensorFlow.
"""
