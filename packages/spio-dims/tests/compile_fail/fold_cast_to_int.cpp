// Promise: cast<Other>() moves a value to another dimension, never out of the dimensions; get()
// gives the int (regression, N2).
// expect: cast<Other>() needs a dimension or a fold
#include "test_types.h"

int wrong() { return K(8).cast<int>(); }
