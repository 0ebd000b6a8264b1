// HLO opcodes as an enum, so that a misspelt opcode is a compile error.
//
// The list is every opcode XLA prints (XLA's own opcode names, in the order
// XLA sorts them). HLO text from a newer XLA may hold an opcode this list
// does not know: it parses as HloOpcode::kOther, and the instruction keeps
// the printed name so that the module still round-trips unchanged. Passes
// never rewrite kOther instructions they do not understand.
#ifndef EXLA_IR_OPCODE_H_
#define EXLA_IR_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace exla {

// V(enumerator, printed name)
#define EXLA_HLO_OPCODES(V) \
  V(kAbs, "abs")                                          \
  V(kAcos, "acos")                                        \
  V(kAcosh, "acosh")                                      \
  V(kAdd, "add")                                          \
  V(kAddDependency, "add-dependency")                     \
  V(kAfterAll, "after-all")                               \
  V(kAllGather, "all-gather")                             \
  V(kAllGatherDone, "all-gather-done")                    \
  V(kAllGatherStart, "all-gather-start")                  \
  V(kAllReduce, "all-reduce")                             \
  V(kAllReduceDone, "all-reduce-done")                    \
  V(kAllReduceStart, "all-reduce-start")                  \
  V(kAllToAll, "all-to-all")                              \
  V(kAnd, "and")                                          \
  V(kAsin, "asin")                                        \
  V(kAsinh, "asinh")                                      \
  V(kAsyncDone, "async-done")                             \
  V(kAsyncStart, "async-start")                           \
  V(kAsyncUpdate, "async-update")                         \
  V(kAtan, "atan")                                        \
  V(kAtan2, "atan2")                                      \
  V(kAtanh, "atanh")                                      \
  V(kBatchNormGrad, "batch-norm-grad")                    \
  V(kBatchNormInference, "batch-norm-inference")          \
  V(kBatchNormTraining, "batch-norm-training")            \
  V(kBitcast, "bitcast")                                  \
  V(kBitcastConvert, "bitcast-convert")                   \
  V(kBroadcast, "broadcast")                              \
  V(kCall, "call")                                        \
  V(kCbrt, "cbrt")                                        \
  V(kCeil, "ceil")                                        \
  V(kCholesky, "cholesky")                                \
  V(kClamp, "clamp")                                      \
  V(kClz, "count-leading-zeros")                          \
  V(kCollectiveBroadcast, "collective-broadcast")         \
  V(kCollectivePermute, "collective-permute")             \
  V(kCollectivePermuteDone, "collective-permute-done")    \
  V(kCollectivePermuteStart, "collective-permute-start")  \
  V(kCollectiveReduce, "collective-reduce")               \
  V(kCompare, "compare")                                  \
  V(kComplex, "complex")                                  \
  V(kConcatenate, "concatenate")                          \
  V(kConditional, "conditional")                          \
  V(kConstant, "constant")                                \
  V(kConvert, "convert")                                  \
  V(kConvolution, "convolution")                          \
  V(kCopy, "copy")                                        \
  V(kCopyDone, "copy-done")                               \
  V(kCopyStart, "copy-start")                             \
  V(kCos, "cosine")                                       \
  V(kCosh, "cosh")                                        \
  V(kCustomCall, "custom-call")                           \
  V(kDivide, "divide")                                    \
  V(kDomain, "domain")                                    \
  V(kDot, "dot")                                          \
  V(kDynamicReshape, "dynamic-reshape")                   \
  V(kDynamicSlice, "dynamic-slice")                       \
  V(kDynamicUpdateSlice, "dynamic-update-slice")          \
  V(kErf, "erf")                                          \
  V(kExp, "exponential")                                  \
  V(kExpm1, "exponential-minus-one")                      \
  V(kFft, "fft")                                          \
  V(kFloor, "floor")                                      \
  V(kFusion, "fusion")                                    \
  V(kGather, "gather")                                    \
  V(kGetDimensionSize, "get-dimension-size")              \
  V(kGetTupleElement, "get-tuple-element")                \
  V(kImag, "imag")                                        \
  V(kInfeed, "infeed")                                    \
  V(kIota, "iota")                                        \
  V(kIsFinite, "is-finite")                               \
  V(kLog, "log")                                          \
  V(kLog1p, "log-plus-one")                               \
  V(kLogistic, "logistic")                                \
  V(kMap, "map")                                          \
  V(kMaximum, "maximum")                                  \
  V(kMinimum, "minimum")                                  \
  V(kMulhi, "mulhi")                                      \
  V(kMultiply, "multiply")                                \
  V(kNegate, "negate")                                    \
  V(kNot, "not")                                          \
  V(kOptimizationBarrier, "opt-barrier")                  \
  V(kOr, "or")                                            \
  V(kOutfeed, "outfeed")                                  \
  V(kPad, "pad")                                          \
  V(kParameter, "parameter")                              \
  V(kPartitionId, "partition-id")                         \
  V(kPopulationCount, "popcnt")                           \
  V(kPower, "power")                                      \
  V(kRaggedAllToAll, "ragged-all-to-all")                 \
  V(kRaggedDot, "ragged-dot")                             \
  V(kReal, "real")                                        \
  V(kRecv, "recv")                                        \
  V(kRecvDone, "recv-done")                               \
  V(kReduce, "reduce")                                    \
  V(kReducePrecision, "reduce-precision")                 \
  V(kReduceScatter, "reduce-scatter")                     \
  V(kReduceWindow, "reduce-window")                       \
  V(kRemainder, "remainder")                              \
  V(kReplicaId, "replica-id")                             \
  V(kReshape, "reshape")                                  \
  V(kReverse, "reverse")                                  \
  V(kRng, "rng")                                          \
  V(kRngBitGenerator, "rng-bit-generator")                \
  V(kRngGetAndUpdateState, "rng-get-and-update-state")    \
  V(kRoundNearestAfz, "round-nearest-afz")                \
  V(kRoundNearestEven, "round-nearest-even")              \
  V(kRsqrt, "rsqrt")                                      \
  V(kScaledDot, "scaled-dot")                             \
  V(kScan, "scan")                                        \
  V(kScatter, "scatter")                                  \
  V(kSelect, "select")                                    \
  V(kSelectAndScatter, "select-and-scatter")              \
  V(kSend, "send")                                        \
  V(kSendDone, "send-done")                               \
  V(kSetDimensionSize, "set-dimension-size")              \
  V(kShiftLeft, "shift-left")                             \
  V(kShiftRightArithmetic, "shift-right-arithmetic")      \
  V(kShiftRightLogical, "shift-right-logical")            \
  V(kShuffle, "shuffle")                                  \
  V(kSign, "sign")                                        \
  V(kSin, "sine")                                         \
  V(kSinh, "sinh")                                        \
  V(kSlice, "slice")                                      \
  V(kSort, "sort")                                        \
  V(kSqrt, "sqrt")                                        \
  V(kStochasticConvert, "stochastic-convert")             \
  V(kSubtract, "subtract")                                \
  V(kTan, "tan")                                          \
  V(kTanh, "tanh")                                        \
  V(kTopK, "topk")                                        \
  V(kTranspose, "transpose")                              \
  V(kTriangularSolve, "triangular-solve")                 \
  V(kTuple, "tuple")                                      \
  V(kWhile, "while")                                      \
  V(kXor, "xor")                                         

enum class HloOpcode : uint8_t {
#define EXLA_DECLARE_OPCODE(enumerator, name) enumerator,
  EXLA_HLO_OPCODES(EXLA_DECLARE_OPCODE)
#undef EXLA_DECLARE_OPCODE
  // An opcode this list does not know; the instruction keeps its name.
  kOther,
};

// The printed name ("add", "get-tuple-element", ...); "other" for kOther.
std::string_view HloOpcodeString(HloOpcode opcode);

// The opcode printed as `name`, or nullopt for a name XLA does not print.
std::optional<HloOpcode> StringToHloOpcode(std::string_view name);

}  // namespace exla

#endif  // EXLA_IR_OPCODE_H_
