// Pairs of f32 accumulators to packed 16-bit pairs, and packed pairs to mma operand registers.
//
// An mma accumulator holds its elements in f32; the epilogue rounds neighbouring pairs to one
// 32-bit register of two halves (the lower element in the low 16 bits), ready for a 4-byte
// store:
//
//     __half2 h = spio::arch::to_half2(d[0], d[1]);          // round to nearest even
//     unsigned r = spio::arch::as_register(h);                // the same 32 bits
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#include <cuda_fp16.h>  // __half2, __floats2half2_rn
#include <cuda_bf16.h>  // __nv_bfloat162, __floats2bfloat162_rn

namespace spio::arch {

// Round (lo, hi) to a __half2 with lo in the low half.
__device__ __forceinline__ __half2 to_half2(float lo, float hi) {
    return __floats2half2_rn(lo, hi);
}

// Round (lo, hi) to a __nv_bfloat162 with lo in the low half.
__device__ __forceinline__ __nv_bfloat162 to_bfloat162(float lo, float hi) {
    return __floats2bfloat162_rn(lo, hi);
}

// The 32 bits of a packed pair, as an mma operand register.
__device__ __forceinline__ unsigned as_register(__half2 pair) {
    return static_cast<unsigned>(__half_as_ushort(pair.x)) |
           (static_cast<unsigned>(__half_as_ushort(pair.y)) << 16);
}

// The 32 bits of a packed pair, as an mma operand register.
__device__ __forceinline__ unsigned as_register(__nv_bfloat162 pair) {
    return static_cast<unsigned>(__bfloat16_as_ushort(pair.x)) |
           (static_cast<unsigned>(__bfloat16_as_ushort(pair.y)) << 16);
}

}  // namespace spio::arch
