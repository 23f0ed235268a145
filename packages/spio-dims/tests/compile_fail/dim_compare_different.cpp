// Promise: dimensions are distinct types; comparing two of them does not compile (lesson 1).
// expect: cannot compare different dimensions
#include "test_types.h"

bool mixed() { return I(5) == J(5); }
