"""Tools: what checks exla's own models and outputs rather than a user's program.

* calibrate_cost: measures the cost model's constants on this machine
  (writes cc/model/cost/cost_constants.h);
* cost_rank: the cost model's order of plans against their measured times;
* memory_model: the memory model's peak against XLA's buffer assignment on
  every module of the corpus;
* corpus_report: parse/print round trips, rewrites and verifier verdicts on
  the corpus;
* optimizer_replay: records optimize_hlo's outcomes on one commit and
  compares them on another (a refactoring must replay with no difference).

They are apart from the workloads because their figures calibrate or judge
exla, and they read the corpus (experiments/corpus) where the workloads
write their own programs. A tool may import the corpus and the harness.
"""
