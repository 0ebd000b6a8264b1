"""Checks shared by the corpus tests and the `corpus_report` tool.

- `forced_threshold(text)`: a threshold that makes the splitter work on
  every program: an eighth of the largest tensor, between 64 B and 16 KB.
- `unchanged_reason(text, threshold, report)`: why exla left a program as it
  was.
- `float64_variant(program)`: the same HLO module with f32 (c64) widened to
  f64 (c128), for a float64 reference of an f32 program, where the program
  permits it.
- `compare_outputs(...)`: the rewritten program's results against the
  original's, using the float64 reference when there is one.
- `exla_verdict(text)`: exla's accept/reject on one text.
- `classify(...)`: exla's and XLA's verdicts on one text as agreement, a
  listed exception (STRICTER_ON_PURPOSE) or a disagreement.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re

import numpy as np

# XLA element types whose f64 widening is the same computation in more
# precision. Modules that reinterpret bits, draw random bits or call
# backends keep their precision (no float64 reference).
_NOT_WIDENABLE = re.compile(
    r" (bitcast-convert|rng-bit-generator|rng|custom-call|reduce-precision)\(")


def forced_threshold(text: str) -> int:
    from exla import _core

    largest = _core.module_summary(text).largest_tensor_bytes
    return max(64, min(16 << 10, largest // 8))


def unchanged_reason(text: str, threshold: int, report) -> str:
    """Why exla left `text` unchanged at `threshold` ('' if it does not say).

    The splitter's reason for the first instruction it left above the
    threshold (``report.unsplit``), or, when it left none, that only the
    program's inputs and literals (parameters, constants) are larger.
    """
    from exla import _core

    if report.unsplit:
        tensor = report.unsplit[0]
        return f"{tensor.where} {tensor.shape}: {tensor.reason}"
    above = {t.opcode for t in _core.tensor_sizes(text) if t.bytes > threshold}
    if above and above <= {"parameter", "constant"}:
        return f"only {' and '.join(sorted(above))} instructions exceed {threshold} B"
    return ""


def float64_variant(program):
    """(text, inputs) of `program` computed in f64/c128, or None.

    Only for programs whose floating-point values are all f32/c64 (no f16,
    bf16, f64 mix whose rounding is part of the program) and that do not
    reinterpret bits or call custom kernels.
    """
    text = program.hlo_text
    if _NOT_WIDENABLE.search(text) or re.search(r"\b(f16|bf16|f64|c128)\[", text):
        return None
    if not re.search(r"\b(f32|c64)\[", text):
        return None
    wide = re.sub(r"\bf32\[", "f64[", text)
    wide = re.sub(r"\bc64\[", "c128[", wide)
    inputs = []
    for x in program.inputs:
        x = np.asarray(x)
        if x.dtype == np.float32:
            x = x.astype(np.float64)
        elif x.dtype == np.complex64:
            x = x.astype(np.complex128)
        inputs.append(x)
    return wide, inputs


def run_hlo(text: str, inputs) -> list:
    """Runs an HLO module on ``inputs``; one NumPy array per result.

    Through TensorFlow's XLA (``call_hlo``: what exla.function runs) where
    TensorFlow is installed, else through jaxlib's CPU client (the JAX-only
    test environment).
    """
    if importlib.util.find_spec("tensorflow") is not None:
        from exla.bridge.tensorflow_call import call_hlo

        return as_numpy(call_hlo(text, inputs))
    from exla.bridge.xla import compile_cpu

    return as_numpy(compile_cpu(text)(*inputs))


def as_numpy(values):
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in values]


def is_inexact(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind in "fc" or dtype.name in ("bfloat16", "float16")


@dataclasses.dataclass
class OutputComparison:
    index: int
    ok: bool
    how: str  # "exact", "float64", "tolerance"
    detail: str = ""


def _max_error(a, b):
    finite = np.isfinite(b)
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(a[finite] - b[finite])))


def compare_outputs(original, rewritten, reference64, *, rtol, atol,
                    eps_factor=64.0):
    """Rewritten vs original results, output by output.

    Integer and bool results must be equal. Floating-point results: with a
    float64 reference, the rewritten program may be off it by at most 4
    times the original program's own error, or `eps_factor` units of
    rounding of the output's scale, whichever is larger; NaN and infinity
    where the original has them. Without one, np.allclose with the
    program's tolerance.
    """
    results = []
    for i, (a, b) in enumerate(zip(original, rewritten)):
        if a.dtype != b.dtype or a.shape != b.shape:
            results.append(OutputComparison(i, False, "shape",
                                            f"{a.dtype}{a.shape} vs {b.dtype}{b.shape}"))
            continue
        if not is_inexact(a.dtype):
            ok = np.array_equal(a, b)
            results.append(OutputComparison(i, ok, "exact",
                                            "" if ok else "integer results differ"))
            continue
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        a64, b64 = a.astype(wide), b.astype(wide)
        same_special = np.array_equal(np.isnan(a64), np.isnan(b64)) and np.array_equal(
            np.isinf(a64) & (a64 == b64), np.isinf(a64))
        if reference64 is not None:
            ref = np.asarray(reference64[i]).astype(wide)
            scale = float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0))
            eps = float(np.finfo(np.float32 if a.dtype.itemsize <= 8 else np.float64).eps)
            e_orig, e_new = _max_error(a64, ref), _max_error(b64, ref)
            bound = max(4.0 * e_orig, eps_factor * eps * scale)
            ok = same_special and e_new <= bound
            results.append(OutputComparison(
                i, ok, "float64",
                f"error vs float64 {e_new:.3e} (original {e_orig:.3e}, bound {bound:.3e})"))
            continue
        ok = same_special and bool(np.allclose(b64, a64, rtol=rtol, atol=atol, equal_nan=True))
        err = _max_error(b64, a64)
        results.append(OutputComparison(i, ok, "tolerance",
                                        f"max difference {err:.3e} (rtol {rtol}, atol {atol})"))
    return results


def exla_verdict(text: str):
    """(accepted, message) of exla's verifier."""
    from exla import _core

    try:
        _core.verify(text)
        return True, ""
    except ValueError as e:
        return False, str(e)


# Where exla rejects a text XLA accepts and exla is stricter on purpose:
# (name, reason, predicate on exla's message).
STRICTER_ON_PURPOSE = [
    ("get-tuple-element shape",
     "XLA's HLO importer takes a get-tuple-element's type from the tuple and "
     "drops the printed shape, so a wrong printed shape disappears without an "
     "error (unless it reaches the result); XLA's HloVerifier "
     "(ShapeVerifier::HandleGetTupleElement, run when a module is compiled) "
     "rejects it. exla's passes read printed shapes, so exla rejects it.",
     re.compile(r"get-tuple-element has shape \S+ but its operands give")),
]


def classify(text: str, exla_ok: bool, exla_message: str, xla_ok: bool) -> str:
    """'agree', 'exception: NAME' or 'disagree'."""
    if exla_ok == xla_ok:
        return "agree"
    if not exla_ok and xla_ok:
        for name, _, pattern in STRICTER_ON_PURPOSE:
            if pattern.search(exla_message):
                return f"exception: {name}"
    return "disagree"
