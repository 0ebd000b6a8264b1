// Which temporaries XLA's buffer assignment places in the allocations of
// the entry's results (model/buffers/result_lending.h).
#include <vector>

#include "model/buffers/result_lending.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::AssignedBuffer;
using exla::LentResultAllocations;

TEST(ResultLending, TemporaryDeadBeforeTheResultIsWrittenTakesItsAllocation) {
  // The result is written at step 10; a temporary alive over steps 2-5
  // fits in its allocation; one alive at step 10 does not.
  const std::vector<AssignedBuffer> buffers = {
      {{100, 10, 10}, true, 0}, {{100, 2, 5}, false, 1}, {{100, 6, 10}, false, 2}};
  EXPECT_TRUE(LentResultAllocations(buffers) == std::vector<bool>({false, true, false}));
}

TEST(ResultLending, TemporaryLargerThanTheResultKeepsItsSlot) {
  const std::vector<AssignedBuffer> buffers = {{{64, 10, 10}, true, 0}, {{128, 2, 5}, false, 1}};
  EXPECT_TRUE(LentResultAllocations(buffers) == std::vector<bool>({false, false}));
}

TEST(ResultLending, TemporariesLentToOneAllocationDoNotOverlap) {
  // The larger temporary is placed first; the smaller overlaps it and
  // finds no other allocation.
  const std::vector<AssignedBuffer> buffers = {
      {{100, 10, 10}, true, 0}, {{60, 3, 7}, false, 1}, {{80, 2, 5}, false, 2}};
  EXPECT_TRUE(LentResultAllocations(buffers) == std::vector<bool>({false, false, true}));
}

TEST(ResultLending, MostRecentAllocationIsTriedFirst) {
  // Results get allocations largest first: the 64-byte one is the most
  // recent, and the temporary (which fits both) takes it; the next
  // temporary, overlapping the first, takes the 128-byte one.
  const std::vector<AssignedBuffer> buffers = {
      {{128, 10, 10}, true, 0}, {{64, 10, 10}, true, 1}, {{64, 2, 5}, false, 2}, {{64, 3, 4}, false, 3}};
  EXPECT_TRUE(LentResultAllocations(buffers) == std::vector<bool>({false, false, true, true}));
}

TEST(ResultLending, EqualSizesGoInPostOrder) {
  // Two temporaries of one size that overlap: the one earlier in post
  // order (position) is placed first and takes the allocation.
  const std::vector<AssignedBuffer> buffers = {
      {{100, 10, 10}, true, 0}, {{100, 2, 5}, false, 7}, {{100, 3, 6}, false, 4}};
  EXPECT_TRUE(LentResultAllocations(buffers) == std::vector<bool>({false, false, true}));
}

TEST(ResultLending, NoTemporaryAliveWhileValuesTheModelDoesNotPlaceMayHoldIt) {
  // At step 4 an expansion's values (which the model does not place one
  // by one) may hold the allocation: a temporary alive then keeps its slot.
  const std::vector<AssignedBuffer> buffers = {{{100, 10, 10}, true, 0}, {{100, 2, 5}, false, 1}};
  EXPECT_TRUE(LentResultAllocations(buffers, {4}) == std::vector<bool>({false, false}));
  EXPECT_TRUE(LentResultAllocations(buffers, {6}) == std::vector<bool>({false, true}));
}

}  // namespace
