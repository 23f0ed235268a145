// Promise: a fold folds a dimension; an int has no dimension to fold (regression, N2).
// expect: Base must be a dimension
#include "test_types.h"

int wrong() { return spio::Fold<int, 8>(1).get(); }
