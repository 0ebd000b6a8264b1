"""Build script for exla: the `exla` package plus its C++ core `exla._exla`."""

import ast
import glob
import os

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py as _build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _core_sources():
    # Every .cc under cc/ is part of the extension; paths relative to setup.py
    # as setuptools requires.
    sources = sorted(glob.glob(os.path.join("cc", "**", "*.cc"), recursive=True))
    if not sources:
        raise RuntimeError("no C++ sources found under cc/")
    return sources


def _core_headers():
    # setuptools rebuilds the extension when a file it depends on is newer
    # than the built library; without the headers an edit to a header alone
    # (a struct's new field) would leave a stale library behind.
    return sorted(glob.glob(os.path.join("cc", "**", "*.h"), recursive=True))


def _supported():
    """The version ranges of python/exla/bridge/versions.py (read, not imported:
    importing exla needs the extension this script builds)."""
    path = os.path.join(HERE, "python", "exla", "bridge", "versions.py")
    tree = ast.parse(open(path).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["SUPPORTED"]:
            return ast.literal_eval(node.value)
    raise RuntimeError(f"no SUPPORTED = {{...}} in {path}")


SUPPORTED = _supported()


def _req(name, dist=None):
    return (dist or name) + SUPPORTED[name]


_AUTOLOAD_PTH = "exla-autoload.pth"


class build_py(_build_py):
    """Also puts python/exla-autoload.pth at the root of build_lib, so that pip
    installs it into site-packages: its one line activates exla at start-up when
    exla's flags are in XLA_FLAGS/EXLA_FLAGS (python/exla/_autoload.py)."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(HERE, "python", _AUTOLOAD_PTH),
                       os.path.join(self.build_lib, _AUTOLOAD_PTH), preserve_mode=0)

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, _AUTOLOAD_PTH)]


ext_modules = [
    Pybind11Extension(
        "exla._exla",
        _core_sources(),
        depends=_core_headers(),
        include_dirs=["cc"],
        cxx_std=17,
        extra_compile_args=["-O2", "-fvisibility=hidden"],
    )
]

setup(
    name="exla",
    version="0.1.0",
    description="Memory-safe XLA programs: rewrites HLO so no tensor exceeds a size limit.",
    long_description=open(os.path.join(HERE, "README.md")).read() if os.path.exists(os.path.join(HERE, "README.md")) else "",
    long_description_content_type="text/markdown",
    package_dir={"": "python"},
    packages=find_packages("python"),
    ext_modules=ext_modules,
    cmdclass={"build_ext": build_ext, "build_py": build_py},
    python_requires=SUPPORTED["python"],
    # What every user needs. The frameworks are extras: a JAX user installs
    # no TensorFlow, and an environment's own jax, numpy or TensorFlow is
    # kept wherever it is in the supported range (python/exla/bridge/versions.py).
    install_requires=[_req("numpy")],
    extras_require={
        "jax": [_req("jax"), _req("jaxlib")],
        # The TensorFlow path needs jaxlib too: jaxlib is XLA's own Python
        # distribution, whose HLO parser, HLO -> StableHLO converter and CPU
        # compiler exla uses to hand the rewritten program to TensorFlow's
        # XlaCallModule op and to read XLA's planned memory.
        "tensorflow": [_req("tensorflow"), _req("jax"), _req("jaxlib")],
        "gpflow": [_req("gpflow"), _req("tf_keras", "tf_keras"), _req("tensorflow"),
                   _req("jax"), _req("jaxlib")],
        # Explanation.plot and `--plot`: the memory timeline as a picture
        # ("outside" legends need 3.7).
        "plot": ["matplotlib>=3.7"],
        # exla's own tests, with the JAX programs of the corpus and the
        # training test; the TensorFlow tests need the "tensorflow-test" extra too.
        "test": ["pytest>=8", "matplotlib>=3.7", "optax>=0.2.5", "chex>=0.1.92", "flax>=0.11.2"],
        "tensorflow-test": ["tensorflow-probability>=0.25", _req("gpflow"),
                            _req("tf_keras", "tf_keras")],
        "experiments": ["tqdm", "matplotlib", "pykeops>=2.3", "faiss-cpu>=1.15", "scikit-learn",
                        "scipy", "optax>=0.2.5", "chex>=0.1.92"],
        # The alternatives some experiments measure exla against (sgpr_scale:
        # GPyTorch). Not in "experiments": torch brings gigabytes of CUDA
        # libraries that the tests and the other experiments do not need.
        "peers": ["torch>=2.14", "gpytorch>=1.15"],
    },
    entry_points={"console_scripts": ["exla=exla.cli:main"]},
    zip_safe=False,
)
