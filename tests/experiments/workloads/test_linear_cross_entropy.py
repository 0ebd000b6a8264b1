"""The cross entropy workload's peers: float64 reference, PyTorch's chunked op, its peak."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from experiments.workloads import linear_cross_entropy as lce
from experiments.workloads import memory_limit


def _problem(batch: int = 12, width: int = 5, vocab: int = 40):
    rng = np.random.default_rng(3)
    return (rng.normal(size=(batch, width)).astype(np.float32),
            rng.normal(size=(width, vocab)).astype(np.float32),
            rng.integers(0, vocab, size=(batch,)).astype(np.int32))


def _loss64(h: np.ndarray, w: np.ndarray, labels: np.ndarray) -> float:
    z = h.astype(np.float64) @ w.astype(np.float64)
    log_total = np.log(np.exp(z).sum(axis=1))
    return float(np.mean(log_total - z[np.arange(len(z)), labels]))


def test_reference_matches_finite_differences_across_chunks() -> None:
    # rows=5 over a batch of 12: three chunks, the last one short.
    h, w, labels = _problem()
    loss, dh, dw = lce.reference64(h, w, labels, rows=5)
    assert float(loss) == pytest.approx(_loss64(h, w, labels), rel=1e-12)
    step = 1e-3
    for grad, arg, index in ((dh, 0, (7, 2)), (dw, 1, (4, 13)), (dw, 1, (0, int(labels[3])))):
        plus, minus = [np.array(a, np.float64) for a in (h, w)], [np.array(a, np.float64)
                                                                  for a in (h, w)]
        plus[arg][index] += step
        minus[arg][index] -= step
        numeric = (_loss64(*plus, labels) - _loss64(*minus, labels)) / (2 * step)
        assert grad[index] == pytest.approx(numeric, rel=1e-5, abs=1e-9), (arg, index)


def test_torch_chunk_rows_fits_the_limit() -> None:
    # The workload: arguments and gradients take 1.03 GB; each logits row 4 MB, held twice.
    assert lce.torch_chunk_rows(1024, 256, 500_000, 1_100_000_000) == 16
    assert lce.torch_chunk_rows(1024, 256, 500_000, 1_500_000_000) == 64
    assert lce.torch_chunk_rows(1024, 256, 500_000, 10**12) == 1024
    assert lce.torch_chunk_rows(1024, 256, 500_000, 10**6) == 1


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_torch_chunked_agrees_with_the_reference() -> None:
    h, w, labels = _problem(batch=32, width=8, vocab=300)
    call, note = lce.torch_chunked(h, w, labels, chunk_rows=8)
    assert "batch_chunk_size=8" in note
    from experiments.workloads.attention import error

    assert error(call(), lce.reference64(h, w, labels)) < 1e-5
    assert error(call(), lce.reference64(h, w, labels)) < 1e-5  # gradients not accumulated


def test_resident_peak_counts_what_the_call_touched() -> None:
    _, peak = lce.resident_peak(lambda: float(np.ones(200 * 2**20 // 8).sum()))
    if peak is None:
        pytest.skip("/proc/self/clear_refs not writable")
    assert 190 * 2**20 <= peak < 400 * 2**20
    _, small = lce.resident_peak(lambda: 1 + 1)
    assert small < 50 * 2**20


def test_peer_without_torch_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(args, limit_bytes):
        raise ImportError("No module named 'torch'")

    monkeypatch.setitem(memory_limit.PEERS, "cross_entropy", ("torch", missing))
    assert memory_limit._peer("cross_entropy", (), 10**9) == {
        "torch_note": "torch not installed: No module named 'torch'"}
    assert memory_limit._peer("sgpr", (), 10**9) == {}


def test_peer_fields_time_the_peer_and_judge_against_float64() -> None:
    h, w, labels = _problem()
    exact = lce.reference64(h, w, labels)
    off = [exact[0], exact[1] * (1 + 1e-3), exact[2]]
    fields = memory_limit._peer_fields(
        "cross_entropy", (h, w, labels), {"plain": exact, "exla": off, "torch": exact},
        {"plain": [2.0, 1.0, 3.0], "exla": [1.0, 1.0, 1.0], "torch": [4.0, 5.0, 6.0]})
    assert fields["torch_time_s"] == 5.0 and fields["torch_ratio"] == 2.5
    assert fields["plain_error_f64"] < 1e-12 and fields["torch_error_f64"] < 1e-12
    assert fields["error_f64"] == pytest.approx(1e-3, rel=1e-6)


def test_peer_table_in_the_section(tmp_path) -> None:
    from experiments.harness.runner import append_rows

    row = {"workload": "cross_entropy", "limit": "1100MB", "plain_time_s": 5.0,
           "exla_time_s": 6.0, "torch_time_s": 9.0, "ratio": 1.2, "torch_ratio": 1.8,
           "torch_peak_mb": 1234.0, "torch_note": "torch 2.14.1, batch_chunk_size=16"}
    append_rows(tmp_path / "memory_limit.csv", [row, {"workload": "sgpr", "limit": "300MB"}],
                memory_limit.COLUMNS)
    lines = memory_limit.memory_limit_section(tmp_path)
    peer_rows = [line for line in lines if "batch_chunk_size=16" in line]
    assert len(peer_rows) == 1 and "| 9 |" in peer_rows[0] and "1.23e+03" in peer_rows[0]


def test_measure_times_the_peer_beside_plain_and_exla(tmp_path, monkeypatch) -> None:
    # The smoke attention program with a stand-in peer: measure() calls it
    # once untimed (its peak read), then in turn with plain and exla.
    calls: list[int] = []

    def peer(args, limit_bytes):
        def call():
            calls.append(limit_bytes)
            return [np.zeros(1)]
        return call, "stand-in"

    monkeypatch.setitem(memory_limit.PEERS, "attention", ("torch", peer))
    row = memory_limit.measure("attention", 2, tmp_path, smoke=True)
    assert calls == [10**6] * 3 and row["torch_note"] == "stand-in"
    assert row["torch_time_min_s"] <= row["torch_time_s"] <= row["torch_time_max_s"]
    assert row["torch_ratio"] == pytest.approx(row["torch_time_s"] / row["plain_time_s"])
    assert row["torch_peak_mb"] > 0
