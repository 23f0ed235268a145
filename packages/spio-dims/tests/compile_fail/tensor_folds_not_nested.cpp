// Promise: a tensor's folds of one base nest, so each logical coordinate has one set of digits.
// expect: distinct strides that divide each other
#include "test_types.h"

using K12 = spio::Fold<K, 12>;
using Bad = spio::Tensor<float, spio::DimInfo<K12, 2, 8>, spio::DimInfo<K8, 8, 1>>;

int wrong() { return Bad::storage_size(); }
