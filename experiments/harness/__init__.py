"""The harness: what measures a workload the same way every time.

Capped child processes and CSV rows (runner, child), exla reached as a user
reaches it (backends), figures read from the executable that ran
(executed), the machine and the commit (machine), the grid of
configurations (sweep), blocked references (blocks), plots (plots) and
rows as Markdown (tables, headline). It is apart because every workload
and tool uses it, so it imports none of them: RESULTS.md, which needs
them all, is assembled above them (experiments/report.py).
"""
