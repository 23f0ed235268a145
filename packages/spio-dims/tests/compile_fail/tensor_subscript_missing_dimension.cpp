// Promise: a lone subscript must be a dimension of the tensor (seed 001: "WARP_J not valid for
// SmemA").
// expect: tensor has no dimension
// expect: tensor_has_dimension<WARP_J>
#include "test_types.h"

uint4* wrong(uint4* smem) {
    const auto smem_a = SmemA(smem);
    return smem_a[WARP_J(1)].get();
}
