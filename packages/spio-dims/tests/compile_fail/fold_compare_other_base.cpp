// Promise: folds compare only with folds of their own base dimension.
// expect: cannot compare different dimensions
#include "test_types.h"

bool mixed() { return K8(1) < J(8); }
