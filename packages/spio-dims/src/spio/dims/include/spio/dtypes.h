// Element types the generator names (docs/dims/generated-code.md, "Data types").
//
// Compiling CUDA (nvcc or NVRTC), the half types come from CUDA's headers and the vector types
// (uint4, float2, ...) are built in; spio adds half8 and bfloat168, 16-byte aligned vectors of
// eight. On a plain host compiler there are no half types. The vector types are CUDA's own when
// its headers are on the include path, so that a host launcher may include <cuda_runtime.h>
// before or after spio (as `-include types.h` puts spio first); without them, this header
// supplies layout-compatible uint4, int4, uint2, float2 and float4 in the global namespace
// (where CUDA declares them) so host tests can use tensors of them.
#pragma once

#include "spio/macros.h"  // SPIO_CUDA

#if SPIO_CUDA

#include <cuda_fp16.h>  // __half, __half2
#include <cuda_bf16.h>  // __nv_bfloat16, __nv_bfloat162

namespace spio {

/// Eight halves in 16 bytes: one ldmatrix row, one 128-bit load.
struct alignas(16) half8 {
    __half data[8];
};

/// Eight bfloat16s in 16 bytes.
struct alignas(16) bfloat168 {
    __nv_bfloat16 data[8];
};

static_assert(sizeof(half8) == 16 && alignof(half8) == 16, "half8 is 16 bytes, 16-aligned");
static_assert(sizeof(bfloat168) == 16 && alignof(bfloat168) == 16,
              "bfloat168 is 16 bytes, 16-aligned");

}  // namespace spio

#elif __has_include(<vector_types.h>) && __has_include(<crt/host_defines.h>)

// A toolkit's include directory (the nvidia-cuda-runtime wheel's lacks crt/, which it needs).
#include <vector_types.h>  // uint4, int4, uint2, float2, float4

#elif !defined(__VECTOR_TYPES_H__)

struct alignas(16) uint4 {
    unsigned int x, y, z, w;
};

struct alignas(16) int4 {
    int x, y, z, w;
};

struct alignas(8) uint2 {
    unsigned int x, y;
};

struct alignas(8) float2 {
    float x, y;
};

struct alignas(16) float4 {
    float x, y, z, w;
};

#endif
