"""exla's glue to XLA's Python distributions.

* :mod:`exla.bridge.xla` — HLO text <-> ``HloModuleProto``, StableHLO portable
  artifacts and XLA's planned memory, through jaxlib. It is the only module of
  exla that touches jaxlib's private APIs.
* :mod:`exla.bridge.tensorflow_call` — runs an HLO module with TensorFlow's own
  XLA: the one owner of the ``XlaCallModule`` op and of the rule that picks
  its platform, used by ``call_hlo`` and by ``exla.function`` alike.

Both are imported lazily: ``import exla`` loads neither jax nor TensorFlow.
"""
