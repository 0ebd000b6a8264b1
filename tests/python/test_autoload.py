"""exla without code changes: XLA_FLAGS with exla's flags and an unmodified script.

The subprocess tests need exla's ``.pth`` file in a site directory. When exla
is pip-installed (CI: ``pip install .[test]``), that is site-packages itself;
otherwise (a source checkout) a temporary directory holding the ``.pth`` is
made a site directory by a ``sitecustomize`` module, which is what site-packages
does for an installed ``.pth``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._frameworks import require

from .conftest import PYTHON_DIR

PTH = "exla-autoload.pth"

SCRIPT = textwrap.dedent('''
    # An ordinary TensorFlow/Keras/GPflow script: it never mentions exla.
    import json, os
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import numpy as np
    import tensorflow as tf

    results = {"xla_flags": os.environ.get("XLA_FLAGS")}

    @tf.function(jit_compile=True)
    def kernel_matvec(x, y, v):
        d = tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
        return tf.linalg.matvec(tf.exp(-d), v)

    rng = np.random.default_rng(0)
    x, y, v = rng.random((400, 3)), rng.random((300, 3)), rng.random(300)
    results["kernel_matvec"] = kernel_matvec(x, y, v).numpy().tolist()

    import tf_keras as keras
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.layers.Dense(512, activation="relu", input_shape=(8,)),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", jit_compile=True)
    data = rng.random((200, 9)).astype("float32")
    model.fit(data[:, :8], data[:, 8:], batch_size=64, epochs=2, verbose=0, shuffle=False)
    results["keras"] = [w.ravel().tolist() for w in model.get_weights()]

    import gpflow
    X = rng.uniform(0, 10, (1000, 1)); Y = np.sin(X) + 0.1 * rng.standard_normal(X.shape)
    sgpr = gpflow.models.SGPR((X, Y), gpflow.kernels.SquaredExponential(),
                              inducing_variable=np.linspace(0, 10, 30)[:, None])
    fit = gpflow.optimizers.Scipy().minimize(
        sgpr.training_loss, sgpr.trainable_variables, compile=True,
        tf_fun_args=dict(jit_compile=True), options=dict(maxiter=3))
    results["sgpr"] = [float(fit.fun)] + [p.numpy().ravel().tolist() for p in sgpr.trainable_variables]
    print(json.dumps(results))
''')


@pytest.fixture(scope="module")
def site_env(tmp_path_factory, subprocess_env) -> dict:
    """Environment whose interpreter processes exla's .pth at start-up."""
    import exla

    env = dict(subprocess_env)
    for name in ("EXLA_DISABLE", "EXLA_STRICT", "EXLA_DUMP_TO"):
        env.pop(name, None)
    package_dir = Path(exla.__file__).resolve().parent
    for directory in site.getsitepackages() + [site.getusersitepackages()]:
        if (Path(directory) / PTH).is_file() and package_dir.parent == Path(directory).resolve():
            return env  # pip-installed: the real thing
    source = PYTHON_DIR / PTH
    if not source.is_file():
        pytest.fail(f"{source} is missing")
    directory = tmp_path_factory.mktemp("site")
    shutil.copy(source, directory / PTH)
    (directory / "sitecustomize.py").write_text(
        "import os, site\nsite.addsitedir(os.path.dirname(os.path.abspath(__file__)))\n")
    env["PYTHONPATH"] = os.pathsep.join([str(directory), env.get("PYTHONPATH", "")])
    return env


def _start(script: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen, timeout: float = 240) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def test_pth_is_one_line_that_imports_nothing_without_flags(site_env, tmp_path):
    lines = (PYTHON_DIR / PTH).read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("import os;")
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nprint('exla' in sys.modules, 'tensorflow' in sys.modules)\n")
    env = dict(site_env)
    assert subprocess.run([sys.executable, str(probe)], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["False", "False"]
    env["XLA_FLAGS"] = "--xla_tensor_size_threshold=1GB"
    assert subprocess.run([sys.executable, str(probe)], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["True", "False"]  # TensorFlow stays lazy
    env["XLA_FLAGS"] = "--xla_memory_limit=1GB"  # the program-level limit alone
    assert subprocess.run([sys.executable, str(probe)], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["True", "False"]
    env["EXLA_DISABLE"] = "1"
    env["XLA_FLAGS"] = "--xla_cpu_enable_fast_math=false"
    assert subprocess.run([sys.executable, str(probe)], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["False", "False"]


# Appended by the test, after the script's own work: how often each program
# that exla rewrote ran, as counted by the rewritten program itself.
PROBE = textwrap.dedent('''
    from exla.tensorflow import patch
    results["exla_runs"] = {}
    for wrapper in patch.wrappers():
        for program in wrapper.programs:
            if program.rewritten:
                results["exla_runs"][program.name] = results["exla_runs"].get(program.name, 0) + program.runs
''')


@pytest.mark.slow
def test_unmodified_script_runs_through_exla(site_env, tmp_path, extension):
    require("gpflow")
    require("tf_keras")
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.replace("print(json.dumps(results))", PROBE + "print(json.dumps(results))"))
    dumps = tmp_path / "dumps"
    with_exla = dict(site_env, EXLA_DUMP_TO=str(dumps),
                     XLA_FLAGS="--xla_tensor_size_threshold=100KB --xla_cpu_enable_fast_math=false")
    without = dict(site_env, XLA_FLAGS="--xla_cpu_enable_fast_math=false")
    runs = [_start(script, with_exla), _start(script, without)]
    (code_a, out_a, err_a), (code_b, out_b, err_b) = [_finish(p) for p in runs]
    assert code_a == 0, err_a[-3000:]
    assert code_b == 0, err_b[-3000:]
    a, b = json.loads(out_a.splitlines()[-1]), json.loads(out_b.splitlines()[-1])
    # exla's flag left XLA_FLAGS before TensorFlow read it; XLA's own flag stayed.
    assert a["xla_flags"] == "--xla_cpu_enable_fast_math=false"
    # exla ran its passes on the script's programs (it dumps the modules it rewrites) ...
    rewritten = [d.name for d in dumps.iterdir() if any("tensor-splitter" in f.name for f in d.iterdir())]
    assert any("kernel_matvec" in name for name in rewritten), rewritten
    assert any("run_step" in name or "train" in name for name in rewritten), rewritten
    assert any("tf_eval" in name for name in rewritten), rewritten
    # ... and the rewritten programs are what ran: kernel_matvec once, Keras's
    # step once per batch (4 batches of 200 rows in each of 2 epochs; the
    # step for the last batch of 8 is rewritten too), GPflow's loss at least
    # once.
    runs = a["exla_runs"]
    assert runs.get("kernel_matvec") == 1, runs
    assert sum(n for name, n in runs.items() if "run_step" in name or "train" in name) == 8, runs
    assert sum(n for name, n in runs.items() if "tf_eval" in name) >= 1, runs
    assert b["exla_runs"] == {}
    import numpy as np

    np.testing.assert_allclose(a["kernel_matvec"], b["kernel_matvec"], rtol=1e-10)
    for p, q in zip(a["keras"], b["keras"]):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-6)
    for p, q in zip(a["sgpr"], b["sgpr"]):
        np.testing.assert_allclose(p, q, rtol=1e-5)


def test_unknown_exla_flag_is_a_clear_error_not_an_abort(site_env, tmp_path):
    require("tensorflow")
    script = tmp_path / "script.py"
    script.write_text("import tensorflow as tf\nprint('imported')\n")
    env = dict(site_env, XLA_FLAGS="--xla_tensor_size_treshold=1GB --xla_cpu_enable_fast_math=false")
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])  # not SIGABRT
    assert "imported" not in result.stdout
    assert "unknown flag '--xla_tensor_size_treshold'" in result.stderr
    assert "--xla_tensor_size_threshold=SIZE" in result.stderr  # lists the right spelling
    assert "Unknown flags in XLA_FLAGS" not in result.stderr  # TensorFlow's abort


# -- in-process units ---------------------------------------------------------

def test_pth_line_looks_for_the_flags_autoload_takes():
    from exla import _autoload

    # The .pth line cannot import exla, so it spells the prefixes out again.
    assert repr(_autoload._EXLA_PREFIXES) in (PYTHON_DIR / PTH).read_text()


def test_should_activate():
    from exla._autoload import should_activate

    assert should_activate({"XLA_FLAGS": "--xla_tensor_split_size=10MB"})
    assert should_activate({"EXLA_FLAGS": "--xla_tensor_size_threshold=1GB"})
    assert should_activate({"XLA_FLAGS": "--xla_memory_limit=300MB"})
    assert not should_activate({"XLA_FLAGS": "--xla_dump_to=/tmp/x"})
    assert not should_activate({})
    assert not should_activate({"XLA_FLAGS": "--xla_tensor_split_size=1MB", "EXLA_DISABLE": "1"})
    assert should_activate({"XLA_FLAGS": "--xla_tensor_split_size=1MB", "EXLA_DISABLE": "0"})
    # One boolean syntax: "false"/"off" keep exla on, whatever the case.
    for value in ("false", "OFF", "no"):
        assert should_activate({"XLA_FLAGS": "--xla_tensor_split_size=1MB", "EXLA_DISABLE": value})
    for value in ("true", "On", "yes"):
        assert not should_activate({"XLA_FLAGS": "--xla_tensor_split_size=1MB", "EXLA_DISABLE": value})


def test_invalid_exla_disable_is_an_error_and_leaves_exla_off(caplog):
    from exla._autoload import should_activate

    with caplog.at_level(logging.ERROR, logger="exla"):
        assert not should_activate({"XLA_FLAGS": "--xla_tensor_split_size=1MB", "EXLA_DISABLE": "maybe"})
    assert "invalid value 'maybe' for EXLA_DISABLE" in caplog.text


def test_flags_leave_xla_flags_for_exla_flags(monkeypatch):
    from exla import _autoload, options

    monkeypatch.setattr(options, "_removed_from_xla_flags", options.Options())
    monkeypatch.setattr(_autoload, "_flag_error", None)
    environ = {"XLA_FLAGS": "--xla_tensor_size_threshold=1GB --xla_dump_to=/tmp/d "
                            "--xla_disable_hlo_passes=tensor-splitter,algsimp "
                            "--xla_tensor_split_size=100MB --xla_memory_limit=3GB"}
    _autoload._take_flags(environ)
    assert environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/d --xla_disable_hlo_passes=tensor-splitter,algsimp"
    assert environ["EXLA_FLAGS"] == ("--xla_tensor_size_threshold=1GB --xla_tensor_split_size=100MB "
                                     "--xla_memory_limit=3GB")
    parsed = options.Options.from_env(environ)
    assert (parsed.threshold, parsed.split_size, parsed.memory_limit) == (10**9, 10**8, 3 * 10**9)
    assert parsed.disabled_passes == ("tensor-splitter", "algsimp")
    assert _autoload.flag_error() is None
    # EXLA_FLAGS keeps winning over what came from XLA_FLAGS.
    monkeypatch.setattr(options, "_removed_from_xla_flags", options.Options())
    environ = {"XLA_FLAGS": "--xla_tensor_size_threshold=1GB", "EXLA_FLAGS": "--xla_tensor_size_threshold=2GB"}
    _autoload._take_flags(environ)
    assert options.Options.from_env(environ).threshold == 2 * 10**9


def test_bad_flag_is_removed_and_remembered(monkeypatch):
    from exla import _autoload, options

    monkeypatch.setattr(options, "_removed_from_xla_flags", options.Options())
    monkeypatch.setattr(_autoload, "_flag_error", None)
    environ = {"XLA_FLAGS": "--xla_tensor_size_threshold=1XB --xla_dump_to=/tmp/d"}
    _autoload._take_flags(environ)
    assert environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/d"
    assert "invalid size '1XB'" in _autoload.flag_error()
    with pytest.raises(ImportError, match="invalid size"):
        _autoload._TensorFlowImportHook().find_spec("tensorflow", None)
