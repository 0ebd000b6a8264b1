"""Workloads: the programs the experiments measure, plain and through exla.

Each module here measures programs a user runs (time, memory, accuracy),
against plain XLA and the peers:

* sweeps, run by the harness one capped child process per configuration:
  the paper's workloads (kernel_matvec, knn, knn_split, sgpr, sgpr_scale,
  transformer, wide_mlp) and their JAX twins (jax_kernel_matvec,
  jax_wide_mlp, jax_sharded);
* studies that run in one process: attention, memory_limit, sgpr_floor;
* the cost of exla itself: bench_splitter, overhead, jax_overhead;
* gpu_check: the JAX workloads on the machine's accelerator (JAX only).

What sets them apart from tools/ is what is measured: a workload's figures
are about the user's program, a tool's about exla's own models and outputs.
A workload may import the harness and other workloads, nothing above them.
"""
