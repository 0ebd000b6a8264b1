// A rule of the algebraic-rewriter: large constants with a structure are
// rebuilt from that structure, so that the compiled module holds no literal
// for them.
//
// TensorFlow folds small structured matrices into literals (GPflow's SGPR
// holds `jitter * I`, `-0.5 * I` and identity right-hand sides as M x M f64
// constants up to about M = 1,100, 8 MB each). XLA keeps every literal in
// the executable for as long as it is loaded, outside the temporaries its
// buffer assignment reuses, so each one costs its full size all the time.
// Rebuilt, they cost nothing where XLA fuses them into their consumer
// (XLA's constant folding leaves broadcasts and iotas alone, so they stay
// rebuilt), and at most one temporary of that size where it cannot:
//
//   splat          c[i...] = v          broadcast(v)
//   diagonal       c[i, j] = i == j ? d : o
//                  select(compare(iota0, iota1, EQ), broadcast(d), broadcast(o))
//   vector on the  c[i, i] = d[i], o elsewhere (square)
//   diagonal       select(compare(iota0, iota1, EQ), broadcast(d, {0}), broadcast(o))
//   broadcast      c does not vary along dimension k
//                  broadcast(c without dimension k)
//
// Values are compared as the text XLA printed, and the new constants take
// that text, so the rebuilt values are the original's bit for bit.
#ifndef EXLA_PASSES_STRUCTURED_LITERALS_H_
#define EXLA_PASSES_STRUCTURED_LITERALS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/computation.h"

namespace exla {

// Constants of at least this many bytes are always considered: below it the
// saving is not worth a change of the program.
inline constexpr int64_t kStructuredLiteralMinBytes = int64_t{1} << 20;  // 1 MiB

// Replaces `constant` (an array constant of at least `min_bytes`) by
// instructions that compute it, when its literal has one of the structures
// above; returns the replacement (the constant is removed) or nullptr. A
// large constant left alone gets a line in `log` saying why.
HloInstruction* RebuildStructuredLiteral(HloInstruction* constant, int64_t min_bytes,
                                         std::vector<std::string>* log);

}  // namespace exla

#endif  // EXLA_PASSES_STRUCTURED_LITERALS_H_
