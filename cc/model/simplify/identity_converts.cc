#include "model/simplify/identity_converts.h"

namespace exla {

HloInstruction* WithoutIdentityConverts(HloInstruction* value) {
  while (value->Is(HloOpcode::kConvert) && value->shape().IsArray() && value->operand(0)->shape().IsArray() &&
         value->shape().element_type() == value->operand(0)->shape().element_type()) {
    value = value->operand(0);
  }
  return value;
}

}  // namespace exla
