// Promise: a tensor's strides are positive, so storage_size() counts the elements it reaches
// (with stride -1, I(4) gave -2) (regression, N3).
// expect: a dimension's stride must be positive
#include "test_types.h"

using Reversed = spio::Tensor<float, spio::DimInfo<I, 4, -1>>;

int wrong() { return Reversed::storage_size(); }
