// Promise: DimInfo describes a dimension or a fold, not an arbitrary type.
// expect: D must be a dimension or a fold
#include "test_types.h"

int wrong() { return spio::DimInfo<int, 4, 1>::size; }
