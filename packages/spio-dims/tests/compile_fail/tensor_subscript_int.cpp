// Promise: a tensor subscript is typed; an int does not say which dimension it counts.
// expect: a tensor subscript must be a dimension
#include "test_types.h"

float* wrong(float* data) { return A(data)[3].get(); }
