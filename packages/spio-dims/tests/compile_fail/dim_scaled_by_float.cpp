// Promise: a dimension scales by ints only; I(3) * 2.5 would silently truncate to I(7)
// (regression, N5).
// expect: deleted
#include "test_types.h"

I wrong() { return I(3) * 2.5; }
