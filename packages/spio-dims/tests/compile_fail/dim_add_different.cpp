// Promise: adding two different dimensions does not compile (lesson 1: I(3) + J(4)).
// expect: cannot add different dimensions
#include "test_types.h"

auto mixed() { return I(3) + J(4); }
