"""Build script for exla: the `exla` package plus its C++ core `exla._exla`."""

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
    python_requires=">=3.10",
    install_requires=[
        # The pipeline uses private jaxlib APIs and TensorFlow's XlaCallModule
        # op; both change between releases, so exla pins the versions it was tested with.
        "tensorflow==2.21.0",
        "jax==0.7.1",
        "jaxlib==0.7.1",
        "numpy>=1.26,<2",
    ],
    extras_require={
        "gpflow": ["gpflow==2.11.2", "tf_keras==2.21.0"],
        # Explanation.plot and `--plot`: the memory timeline as a picture
        # ("outside" legends need 3.7).
        "plot": ["matplotlib>=3.7"],
        "test": ["pytest>=8", "gpflow==2.11.2", "tf_keras==2.21.0", "matplotlib>=3.7",
                 "optax==0.2.5", "chex==0.1.92",  # optax: the JAX training test
                 # the corpus of real programs (tests/corpus)
                 "flax==0.11.2", "tensorflow-probability==0.25.0"],
        "experiments": ["tqdm", "matplotlib", "pykeops==2.3", "faiss-cpu==1.15.1", "scikit-learn", "scipy",
                        "gpflow==2.11.2", "tf_keras==2.21.0", "optax==0.2.5", "chex==0.1.92"],
        # The alternatives some experiments measure exla against (sgpr_scale:
        # GPyTorch). Not in "experiments": torch brings gigabytes of CUDA
        # libraries that the tests and the other experiments do not need.
        "peers": ["torch==2.14.1", "gpytorch==1.15.2"],
    },
    entry_points={"console_scripts": ["exla=exla.cli:main"]},
    zip_safe=False,
)
