// Promise: a checkerboard index takes its row and column dimensions, in that order.
// expect: no matching
#include "test_types.h"

int wrong() { return SmemChecker(K8(1), I(5)).get(); }
