// Promise: a tensor's dimensions are spio::DimInfo<D, Size, Stride>.
// expect: each dimension must be a spio::DimInfo
#include "test_types.h"

using Bad = spio::Tensor<float, I, J>;

int wrong() { return Bad::storage_size(); }
