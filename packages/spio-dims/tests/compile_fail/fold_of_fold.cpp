// Promise: a fold folds a dimension, not another fold: a fold of K8 by 2 is Fold<K, 16>, and
// Fold<K8, 2> would not add to K (regression, N2).
// expect: Base must be a dimension
#include "test_types.h"

int wrong() { return spio::Fold<K8, 2>(1).get(); }
