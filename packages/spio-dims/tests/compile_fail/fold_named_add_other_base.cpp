// Promise: named folds of different bases do not mix.
// expect: cannot add different dimensions
#include "test_types.h"

auto mixed() { return BLOCK_I(1) + WARP_J(1); }
