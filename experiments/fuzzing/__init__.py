"""Fuzzing: random programs and mutated HLO text against exla, judged without a person.

* fuzz_programs: seeded random TensorFlow and JAX programs;
* fuzz: the differential fuzzer (each program unrewritten, rewritten and in
  float64; a mismatch is blamed on passes by ablation);
* fuzz_mutate: the text-mutation fuzzer (every mutant accepted or refused by
  exla as XLA does, never a crash);
* heldout_corpus: writes the memory model's held-out modules
  (experiments/corpus/heldout_modules/), drawn by fuzz_programs with fixed
  seeds beside the corpus's held-out framework programs.

They are apart from the workloads and tools because they measure nothing:
they search for failures, keep a reproducer of each, and count verdicts.
They need neither the harness nor the corpus, except heldout_corpus, which
writes into the corpus.
"""
