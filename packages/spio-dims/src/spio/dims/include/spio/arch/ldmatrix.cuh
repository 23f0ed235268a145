// Warp-wide loads of 8 x 8 matrices of 16-bit elements from shared memory: ldmatrix.sync.aligned.
//
// ldmatrix loads one, two or four 8 x 8 matrices (.x1, .x2, .x4); each matrix row is 16
// contiguous bytes in shared memory, 16-byte aligned. Lanes 8 * m ... 8 * m + 7 pass the
// addresses of rows 0 ... 7 of matrix m; the other lanes' addresses are ignored (lanes 8 ... 31
// for .x1, 16 ... 31 for .x2). Register m of every lane then receives two elements of matrix
// m: lane L holds row L / 4, columns 2 * (L % 4) and 2 * (L % 4) + 1 (the lower column in the
// low 16 bits). With .trans the matrix arrives transposed: lane L holds column L / 4, rows
// 2 * (L % 4) and 2 * (L % 4) + 1.
//
// Example: load a 16 x 16 f16 tile with rows of 32 bytes into the four registers of an mma
// A operand (matrix 0 = rows 0-7 / cols 0-7, 1 = rows 8-15 / cols 0-7, 2 = rows 0-7 /
// cols 8-15, 3 = rows 8-15 / cols 8-15):
//
//     unsigned a[4];
//     const __half* row = tile + (lane % 16) * 16 + (lane / 16) * 8;
//     spio::arch::ldmatrix(a, row);
//
// The number of matrices follows from the destination array (1, 2 or 4 registers).
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "spio/arch/ldmatrix.cuh needs sm_80 or newer"
#endif

#include "shared_address.cuh"

namespace spio::arch {

// ldmatrix .x1: one 8 x 8 matrix; lanes 0-7 pass its row addresses.
__device__ __forceinline__ void ldmatrix(unsigned (&r)[1], const void* smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0])
                 : "r"(shared_address(smem_row))
                 : "memory");
}

// ldmatrix .x2: two 8 x 8 matrices; lanes 0-15 pass their row addresses.
__device__ __forceinline__ void ldmatrix(unsigned (&r)[2], const void* smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(shared_address(smem_row))
                 : "memory");
}

// ldmatrix .x4: four 8 x 8 matrices; all 32 lanes pass row addresses.
__device__ __forceinline__ void ldmatrix(unsigned (&r)[4], const void* smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(smem_row))
                 : "memory");
}

// ldmatrix .x1.trans: one 8 x 8 matrix, transposed on the way into registers.
__device__ __forceinline__ void ldmatrix_trans(unsigned (&r)[1], unsigned smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0])
                 : "r"(smem_row)
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_trans(unsigned (&r)[1], const void* smem_row) {
    ldmatrix_trans(r, shared_address(smem_row));
}

// ldmatrix .x2.trans: two 8 x 8 matrices, transposed.
__device__ __forceinline__ void ldmatrix_trans(unsigned (&r)[2], unsigned smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_row)
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_trans(unsigned (&r)[2], const void* smem_row) {
    ldmatrix_trans(r, shared_address(smem_row));
}

// ldmatrix .x4.trans: four 8 x 8 matrices, transposed.
__device__ __forceinline__ void ldmatrix_trans(unsigned (&r)[4], unsigned smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_row)
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_trans(unsigned (&r)[4], const void* smem_row) {
    ldmatrix_trans(r, shared_address(smem_row));
}

}  // namespace spio::arch
