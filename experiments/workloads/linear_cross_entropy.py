"""The LM-head cross entropy's peers: a float64 reference and PyTorch's chunked op.

``memory_limit.py``'s ``cross_entropy`` workload (TensorFlow: ``h @ w``, then
``sparse_softmax_cross_entropy_with_logits``, mean over the batch, loss and
the gradients in ``h`` and ``w``) is judged against :func:`reference64` and
timed beside :func:`torch_chunked`, PyTorch's
``linear_cross_entropy(..., options=LinearCrossEntropyOptions(batch_chunk_size=c))``.
PyTorch's own chunk heuristic (``chunking_method="auto"``) picks one row per
chunk at vocabulary 500,000 x width 256, which re-reads the whole weight
gradient once per row (minutes per call on 2 cores); the chunk here is the
largest power of two whose logits fit the same memory limit as exla
(:func:`torch_chunk_rows`), and its peak is measured (:func:`resident_peak`).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np


def reference64(h: np.ndarray, w: np.ndarray, labels: np.ndarray,
                rows: int = 128) -> list[np.ndarray]:
    """Loss, d loss / d h and d loss / d w in float64, ``rows`` batch rows at a time.

    Loss = mean over rows of ``logsumexp(z) - z[label]`` with ``z = h @ w``;
    its gradient in the logits is ``(softmax(z) - onehot(label)) / batch``.
    """
    w64 = w.astype(np.float64)
    batch = len(h)
    loss, dh, dw = 0.0, np.empty(h.shape), np.zeros(w.shape)
    for start in range(0, batch, rows):
        hb = h[start:start + rows].astype(np.float64)
        picked = np.arange(len(hb)), labels[start:start + rows]
        z = hb @ w64
        top = z.max(axis=1, keepdims=True)
        p = np.exp(z - top)
        total = p.sum(axis=1, keepdims=True)
        loss += float(np.sum(np.log(total[:, 0]) + top[:, 0] - z[picked]))
        p /= total
        p[picked] -= 1.0
        p /= batch
        dh[start:start + rows] = p @ w64.T
        dw += hb.T @ p
    return [np.asarray(loss / batch), dh, dw]


def torch_chunk_rows(batch: int, width: int, vocab: int, limit_bytes: int) -> int:
    """Rows per chunk for PyTorch: the largest power of two (at most ``batch``)
    whose f32 logits, held twice (logits and their gradient), fit beside the
    arguments and the two gradients within ``limit_bytes``; at least 1."""
    fixed = 4 * (2 * (batch * width + vocab * width)) + 8 * batch
    room = max(limit_bytes - fixed, 0) // (2 * 4 * vocab)
    return max(1, min(batch, 1 << max(int(room).bit_length() - 1, 0)))


def torch_chunked(h: np.ndarray, w: np.ndarray, labels: np.ndarray,
                  chunk_rows: int) -> tuple[Callable[[], list[np.ndarray]], str]:
    """A call of PyTorch's chunked linear cross entropy (value and gradients,
    results as TensorFlow's workload returns them) and a note naming torch's
    version and the options; raises ImportError without torch."""
    # torch's chunked op asks whether triton imports; loading triton's own LLVM
    # into a process that holds TensorFlow's XLA crashes it (segmentation
    # fault), and a CPU run has no use for triton: make its import fail.
    sys.modules.setdefault("triton", None)
    import torch
    import torch.nn.functional as F

    x = torch.tensor(h, requires_grad=True)
    weight = torch.tensor(np.ascontiguousarray(w.T), requires_grad=True)  # (vocab, width)
    target = torch.tensor(labels.astype(np.int64))
    options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk_rows,
                                                 chunking_method=None)

    def call() -> list[np.ndarray]:
        x.grad = weight.grad = None
        loss = F.linear_cross_entropy(x, weight, target, reduction="mean", options=options)
        loss.backward()
        return [loss.detach().numpy(), x.grad.numpy(), weight.grad.numpy().T]

    note = (f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
            f"LinearCrossEntropyOptions(batch_chunk_size={chunk_rows}, chunking_method=None, "
            f"acc_policy={options.acc_policy!r})")
    return call, note


def resident_peak(call: Callable[[], Any]) -> tuple[Any, int | None]:
    """``call()``'s result and how far it raised the process's resident memory,
    in bytes: Linux's high-water mark (VmHWM) reset to the current resident
    size (``/proc/self/clear_refs``) before the call and read after it. None
    where the kernel does not allow the reset. Counts what the call allocated
    and touched, not what existed before it (its arguments)."""
    from experiments.harness.child import current_rss_mb, peak_rss_so_far_mb

    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return call(), None
    before = current_rss_mb()
    result = call()
    return result, int((peak_rss_so_far_mb() - before) * 2**20)
