// Promise: a swizzle index takes its row and column dimensions, in that order.
// expect: no matching
#include "test_types.h"

int wrong() { return SmemSwizzle(K8(1), I(5)).get(); }
