// Promise: a constant tensor (constant=True) cannot be written through.
// expect: read-only | const
#include "test_types.h"

using ConstA = spio::Tensor<const float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;

void wrong(const float* data) { *ConstA(data)[I(1)] = 1.0f; }
