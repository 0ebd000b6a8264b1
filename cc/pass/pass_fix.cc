#include "pass/pass_fix.h"

namespace exla {

bool HloPassFix::Run(HloModule* module) {
  bool changed = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (!pipeline_.Run(module, /*dump_dir=*/"", /*records=*/nullptr)) break;
    changed = true;
  }
  return changed;
}

}  // namespace exla
