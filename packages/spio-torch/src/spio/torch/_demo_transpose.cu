// The `spio demo` kernel: a matrix transpose written with typed dimensions.
//
// A is I x J and B is J x I. Both are subscripted with the same world coordinates; each
// tensor applies them with its own strides, so the transpose is the tensors' definitions
// rather than index arithmetic. The types header comes from spio.torch._demo.
#include "types.h"  // A, B, BlockIndex, ThreadIndex: generated for the demo's size

extern "C" __global__ void transpose(float* b_ptr, const float* a_ptr) {
    BlockIndex block;    // from blockIdx.x: (I32, J32)
    ThreadIndex thread;  // from threadIdx.x: (I, J)
    *B(b_ptr)[block][thread] = *A(a_ptr)[block][thread];
}
