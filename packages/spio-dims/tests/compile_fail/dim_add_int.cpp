// Promise: an int is not a dimension; I(3) + 4 does not compile (write I(3) + I(4)).
// expect: no match for | invalid operands
#include "test_types.h"

auto mixed() { return I(3) + 4; }
