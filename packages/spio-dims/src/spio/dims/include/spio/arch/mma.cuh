// Warp-wide tensor-core matrix multiply-accumulate: mma.sync.aligned, row.col, f32 accumulators.
//
// Each function computes D = A * B + C for one tile of the given shape, where all 32 lanes of
// the warp call it together and each lane passes its own registers. A is M x K (row-major, the
// "row" of row.col), B is K x N (column-major, the "col"), C and D are M x N in f32.
//
//   shape      A registers       B registers       C/D registers
//   m16n8k8    2 x (2 x 16-bit)  1 x (2 x 16-bit)  4 x f32
//   m16n8k16   4 x (2 x 16-bit)  2 x (2 x 16-bit)  4 x f32
//
// Which lane holds which matrix element is the PTX ISA's fragment layout; spio/fragment.cuh
// states it as typed lane maps. These wrappers only move registers into the instruction:
//
//     float d[4];
//     spio::arch::mma_m16n8k16_f16(d, a, b, c);  // d = a * b + c, a and b hold f16 pairs
//
// D may alias C (accumulate in place): the instruction reads all of C before writing D.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "spio/arch/mma.cuh needs sm_80 or newer (mma.sync m16n8k16 with bf16)"
#endif

namespace spio::arch {

// D = A * B + C, m16n8k8, f16 inputs.
__device__ __forceinline__ void mma_m16n8k8_f16(float (&d)[4], const unsigned (&a)[2],
                                                const unsigned (&b)[1], const float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// D = A * B + C, m16n8k8, bf16 inputs.
__device__ __forceinline__ void mma_m16n8k8_bf16(float (&d)[4], const unsigned (&a)[2],
                                                 const unsigned (&b)[1], const float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// D = A * B + C, m16n8k16, f16 inputs.
__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const unsigned (&a)[4],
                                                 const unsigned (&b)[2], const float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
}

// D = A * B + C, m16n8k16, bf16 inputs.
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const unsigned (&a)[4],
                                                  const unsigned (&b)[2], const float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
}

}  // namespace spio::arch
