"""Round-trip tests of exla's HLO parser and printer over the real-program corpus.

For every program of `experiments/corpus/programs.py` (TensorFlow, GPflow, tf_keras
and JAX programs lowered to HLO text by exla's bridge):

(a) `exla._exla.round_trip(text)` reproduces the text up to whitespace (runs of
    whitespace are normalised to one space), and a second round trip returns
    its input unchanged (the printer's output is a fixed point);
(b) XLA's own parser (jaxlib, via `exla.bridge.xla.text_to_proto`) accepts the
    reprinted text and reads the same module from it as from the original
    (compared through XLA's canonical re-print);
(c) the reprinted program, run through TensorFlow's XLA (`call_hlo`; jaxlib's
    CPU client in the JAX-only environment), gives
    bit-identical results to the original text run the same way, and both match
    the outputs of the original tf.function / jax.jit within the program's
    tolerance (`CorpusProgram.rtol/atol`, np.allclose semantics; integer and
    bool results must be equal);
(d) parsing + printing the GPflow SGPR loss-and-gradient module (about 1,100
    instructions) takes well under 100 ms.

The extension is required when EXLA_REQUIRE_EXTENSION is set (CI); otherwise
the module is skipped if `exla._exla` has not been built.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from experiments.corpus import programs
from tests._extension import load_extension  # noqa: E402

_exla = load_extension()

NAMES = programs.names()


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _first_difference(a: str, b: str, context: int = 160) -> str:
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    return (f"first difference at normalised offset {i}:\n"
            f"  original:  ...{a[max(0, i - context):i + context]}...\n"
            f"  reprinted: ...{b[max(0, i - context):i + context]}...")


_reprinted: dict[str, str] = {}


def _round_trip(name: str) -> str:
    if name not in _reprinted:
        _reprinted[name] = _exla.round_trip(programs.get(name).hlo_text)
    return _reprinted[name]


def test_corpus_size():
    assert len(NAMES) >= 15, NAMES
    long_forms = [n for n in NAMES if programs.buildable(n) and programs.get(n).long_form]
    assert long_forms, "the corpus must keep a module in XLA's long form"
    for name in long_forms:
        text = programs.get(name).hlo_text
        assert "ENTRY %" in text and "metadata={" in text, name


# (a) ------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_round_trip_reproduces_text(name):
    program = programs.get(name)
    reprinted = _round_trip(name)
    original = _normalise(program.hlo_text)
    normalised = _normalise(reprinted)
    if normalised != original:
        pytest.fail(_first_difference(original, normalised), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_is_a_fixed_point(name):
    reprinted = _round_trip(name)
    again = _exla.round_trip(reprinted)
    if again != reprinted:
        pytest.fail(_first_difference(reprinted, again), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_module_summary_counts_instructions(name):
    program = programs.get(name)
    summary = _exla.module_summary(program.hlo_text)
    assert summary.instructions == program.instruction_count
    computations = len(re.findall(r"^(ENTRY )?%?[\w.\-]+ .*\{$",
                                  program.hlo_text, re.M))
    assert summary.computations == computations


# (b) ------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_xla_parser_accepts_reprinted_text(name):
    from exla.bridge import xla as bridge

    original = bridge.proto_to_text(bridge.text_to_proto(
        programs.get(name).hlo_text))
    reprinted = bridge.proto_to_text(bridge.text_to_proto(_round_trip(name)))
    if reprinted != original:
        pytest.fail("XLA reads a different module from the reprinted text; "
                    + _first_difference(original, reprinted), pytrace=False)


# (c) ------------------------------------------------------------------------

def _is_inexact(dtype: np.dtype) -> bool:
    return dtype.kind in "fc" or dtype.name in ("bfloat16", "float16")


@pytest.mark.parametrize("name", NAMES)
def test_reprinted_program_executes_identically(name):
    from experiments.corpus import checks

    program = programs.get(name)
    original = checks.run_hlo(program.hlo_text, program.inputs)
    reprinted = checks.run_hlo(_round_trip(name), program.inputs)
    reference = program.reference_outputs
    assert len(original) == len(reference), (len(original), len(reference))
    assert len(reprinted) == len(reference), (len(reprinted), len(reference))
    for i, (a, b, ref) in enumerate(zip(original, reprinted, reference)):
        assert a.dtype == b.dtype == ref.dtype, (i, a.dtype, b.dtype,
                                                 ref.dtype)
        assert a.shape == b.shape == ref.shape, (i, a.shape, b.shape,
                                                 ref.shape)
        # Reprinted vs original text: bit-identical (NaNs included).
        assert a.tobytes() == b.tobytes(), f"output {i} differs in bits"
        # Both vs the original tf.function / jax.jit.
        if _is_inexact(ref.dtype):
            wide = np.complex128 if ref.dtype.kind == "c" else np.float64
            np.testing.assert_allclose(
                a.astype(wide), ref.astype(wide), rtol=program.rtol,
                atol=program.atol, equal_nan=True,
                err_msg=f"{name} output {i} vs reference")
        else:
            np.testing.assert_array_equal(
                a, ref, err_msg=f"{name} output {i} vs reference")


# (d) ------------------------------------------------------------------------

def test_sgpr_gradient_module_parses_and_prints_fast():
    program = programs.get("sgpr_loss_and_grads")
    text = program.hlo_text
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        _exla.round_trip(text)
        best = min(best, time.perf_counter() - start)
    instructions = _exla.module_summary(text).instructions
    print(f"\nSGPR loss+gradients module: {instructions} instructions, "
          f"{len(text)} characters; parse+print best of 5: "
          f"{best * 1e3:.2f} ms")
    assert instructions >= 1000
    assert best < 0.100, f"parse+print took {best * 1e3:.1f} ms"
