"""Build script for exla: the `exla` package plus its C++ core `exla._exla`."""

import glob
import os

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def _core_sources():
    # Every .cc under cc/ is part of the extension; paths relative to setup.py
    # as setuptools requires.
    sources = sorted(glob.glob(os.path.join("cc", "**", "*.cc"), recursive=True))
    if not sources:
        raise RuntimeError("no C++ sources found under cc/")
    return sources


ext_modules = [
    Pybind11Extension(
        "exla._exla",
        _core_sources(),
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
    cmdclass={"build_ext": build_ext},
    python_requires=">=3.10",
    install_requires=[
        # The pipeline uses private jaxlib APIs and TensorFlow's XlaCallModule
        # op; both move between releases, so these are pinned (DESIGN.md).
        "tensorflow==2.21.0",
        "jax==0.7.1",
        "jaxlib==0.7.1",
        "numpy>=1.26,<2",
    ],
    extras_require={
        "gpflow": ["gpflow==2.11.2", "tf_keras==2.21.0"],
        "test": ["pytest>=8", "gpflow==2.11.2", "tf_keras==2.21.0"],
    },
    entry_points={"console_scripts": ["exla=exla.cli:main"]},
    zip_safe=False,
)
