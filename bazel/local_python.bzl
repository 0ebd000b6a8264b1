"""@local_python: the Python headers and pybind11 headers of a local Python.

The Python is $PYTHON_BIN_PATH if set (e.g. --repo_env=PYTHON_BIN_PATH=...),
else the first python3 (then python) on PATH, so an activated virtual
environment is used. pybind11 must be pip-installed in it. Nothing is
downloaded.

Targets:
  @local_python//:python_headers   Python.h and friends
  @local_python//:pybind11         pybind11's headers (+ python_headers)
  @local_python//:python.sh        runs that Python (for tests)
"""

_PROBE = """
import sys, sysconfig
try:
    import pybind11
except ImportError:
    sys.exit("pybind11 is not installed for " + sys.executable +
             "; pip install pybind11")
print(sysconfig.get_paths()["include"])
print(pybind11.get_include())
print(sys.executable)
"""

_BUILD = """\
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "python_headers",
    hdrs = glob(["python_include/**/*.h"]),
    includes = ["python_include"],
)

cc_library(
    name = "pybind11",
    hdrs = glob(["pybind11_include/pybind11/**/*.h"]),
    includes = ["pybind11_include"],
    deps = [":python_headers"],
)

exports_files(["python.sh"])
"""

def _local_python_impl(ctx):
    python = ctx.os.environ.get("PYTHON_BIN_PATH", "")
    if not python:
        for name in ("python3", "python"):
            found = ctx.which(name)
            if found:
                python = str(found)
                break
    if not python:
        fail("@local_python: no python3 on PATH; set PYTHON_BIN_PATH")
    result = ctx.execute([python, "-c", _PROBE])
    if result.return_code != 0:
        fail("@local_python: %s failed: %s" % (python, result.stderr))
    lines = result.stdout.strip().splitlines()
    if len(lines) != 3:
        fail("@local_python: unexpected output from %s: %s" % (python, result.stdout))
    python_include, pybind11_include, executable = lines
    if not ctx.path(python_include).get_child("Python.h").exists:
        fail("@local_python: no Python.h in %s (install the Python development headers)" % python_include)
    ctx.symlink(python_include, "python_include")
    ctx.symlink(pybind11_include, "pybind11_include")
    ctx.file("python.sh", "#!/bin/sh\nexec '%s' \"$@\"\n" % executable, executable = True)
    ctx.file("WORKSPACE", "workspace(name = \"local_python\")\n")
    ctx.file("BUILD", _BUILD)

local_python_repository = repository_rule(
    implementation = _local_python_impl,
    environ = ["PYTHON_BIN_PATH", "PATH"],
    local = True,
)
