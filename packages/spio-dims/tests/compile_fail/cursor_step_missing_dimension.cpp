// Promise: a cursor steps only along dimensions its tensor has.
// expect: tensor has no dimension
// expect: tensor_has_dimension<BLOCK_I>
#include "test_types.h"

float* wrong(float* data) {
    auto b = B(data)[K(1)];
    b.step(BLOCK_I(1));
    return b.get();
}
