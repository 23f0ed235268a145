// Warpgroup matrix multiply-accumulate (sm_90a): wgmma.mma_async with both operands read from
// shared memory through matrix descriptors, f32 accumulators in registers.
//
// A warpgroup is 4 consecutive warps whose first warp index is a multiple of 4; its 128
// threads issue each wgmma together. D (64 x N, f32) = A (64 x 16) * B (16 x N) + D, where A
// and B are tiles of shared memory that the tensor cores read asynchronously: the
// instruction returns at once, and the accumulators and the tiles may be touched again only
// after wgmma_wait_group has seen its group complete.
//
//     wgmma_fence();                                     // accumulators ready for the tensor cores
//     wgmma<256, __half, 0>(acc, a_desc, b_desc, true);  // one or more, same accumulators
//     wgmma_commit_group();
//     wgmma_wait_group<0>();                             // acc readable, tiles reusable
//
// Layouts: this file takes K-major operands (A rows of K, B rows of K: B^T row-major, a linear
// layer's weight), or M- / N-major ones with TransA / TransB = 1 (A^T, a K x M matrix, and a
// K x N B, row by row: a tile of them is rows of K), laid out by TMA with the 128-byte swizzle
// (tma.cuh; spio/swizzle.h's SwizzleIndex<8, ...>): rows of 64 16-bit elements, 128 bytes,
// 8-row groups of 1024 bytes starting on 1024-byte boundaries. A descriptor names a tile's
// first row and the byte stride between its 8-row groups; a step of 16 along K within the
// 128-byte rows of a K-major tile is a start address 32 bytes further (the swizzle applies to
// the absolute address bits, so the tensor cores find each row's chunks where TMA put them),
// and in an M- or N-major tile 16 rows further.
//
// Accumulator layout: thread t of the warpgroup (warp w = t / 32, lane l = t % 32) holds, for
// each 8-column block j of D, d[4 * j + e] at row 16 * w + l / 4 + 8 * (e / 2) and column
// 8 * j + 2 * (l % 4) + e % 2: warp w's 16 rows in the layout of an m16n8 mma.sync C fragment
// per block (spio/fragment.cuh), so the same epilogues serve both.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))
#error "spio/arch/wgmma.cuh needs the sm_90a target (wgmma is arch-specific)"
#endif

#include <cuda_bf16.h>  // __nv_bfloat16
#include <cuda_fp16.h>  // __half

#include "spio/detail/meta.h"  // is_same_v: the element type
#include "shared_address.cuh"

namespace spio::arch {

/// The descriptor swizzle modes of wgmma (bits 62-63 of a matrix descriptor).
enum class WgmmaSwizzle : unsigned { none = 0, bytes128 = 1, bytes64 = 2, bytes32 = 3 };

/// The matrix descriptor of a shared-memory tile at `tile`: `leading_bytes` and
/// `stride_bytes` are the byte offsets between core matrices along the leading and the
/// strided dimension (for a K-major tile with the 128-byte swizzle: 16, ignored, and 1024,
/// the 8-row groups). Addresses and offsets are in units of 16 bytes in the descriptor.
__device__ __forceinline__ unsigned long long wgmma_descriptor(const void* tile,
                                                               unsigned leading_bytes,
                                                               unsigned stride_bytes,
                                                               WgmmaSwizzle swizzle) {
    const unsigned address = shared_address(tile);
    return static_cast<unsigned long long>((address & 0x3ffff) >> 4) |
           static_cast<unsigned long long>((leading_bytes >> 4) & 0x3fff) << 16 |
           static_cast<unsigned long long>((stride_bytes >> 4) & 0x3fff) << 32 |
           static_cast<unsigned long long>(static_cast<unsigned>(swizzle)) << 62;
}

/// Order this thread's register writes (the accumulators, say) before the next wgmma reads
/// them; every thread of the warpgroup calls it before the first wgmma of a group.
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// Close the wgmmas issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit_group() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Wait until at most N of the warpgroup's committed groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
    static_assert(N >= 0 && N <= 7, "wgmma_wait_group<N>: N is 0 ... 7");
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The instructions, one definition per shape for both 16-bit element types: "accumulate"
// false writes D = A * B (the scale-d predicate), true adds into D.
// clang-format off
#define SPIO_WGMMA_M64N128K16(NAME, TYPE)                                                     \
    template <int TransB, int TransA>                                                       \
    __device__ __forceinline__ void NAME(float(&d)[64], unsigned long long a_desc,            \
                                         unsigned long long b_desc, bool accumulate) {      \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                         \
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {"      \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                      \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                      \
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                      \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"                      \
                     "}, %64, %65, p, 1, 1, %68, %67;\n}\n"                          \
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),                      \
                       "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),                      \
                       "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),                      \
                       "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),                      \
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),                      \
                       "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),                      \
                       "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),                      \
                       "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),                      \
                       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),                      \
                       "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),                      \
                       "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                      \
                     : "l"(a_desc), "l"(b_desc), "r"(static_cast<int>(accumulate)), "n"(TransB), "n"(TransA)); \
    }

#define SPIO_WGMMA_M64N256K16(NAME, TYPE)                                                     \
    template <int TransB, int TransA>                                                       \
    __device__ __forceinline__ void NAME(float(&d)[128], unsigned long long a_desc,            \
                                         unsigned long long b_desc, bool accumulate) {      \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                         \
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"      \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                      \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                      \
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                      \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "                      \
                     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                      \
                     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                      \
                     "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "                      \
                     "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"                      \
                     "}, %128, %129, p, 1, 1, %132, %131;\n}\n"                          \
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),                      \
                       "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),                      \
                       "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),                      \
                       "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),                      \
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),                      \
                       "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),                      \
                       "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),                      \
                       "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),                      \
                       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),                      \
                       "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),                      \
                       "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),                      \
                       "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),                      \
                       "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),                      \
                       "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),                      \
                       "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),                      \
                       "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),                      \
                       "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),                      \
                       "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),                      \
                       "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),                      \
                       "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),                      \
                       "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),                      \
                       "+f"(d[126]), "+f"(d[127])                      \
                     : "l"(a_desc), "l"(b_desc), "r"(static_cast<int>(accumulate)), "n"(TransB), "n"(TransA)); \
    }

// clang-format on

SPIO_WGMMA_M64N128K16(wgmma_m64n128k16_f16, "f16")
SPIO_WGMMA_M64N128K16(wgmma_m64n128k16_bf16, "bf16")
SPIO_WGMMA_M64N256K16(wgmma_m64n256k16_f16, "f16")
SPIO_WGMMA_M64N256K16(wgmma_m64n256k16_bf16, "bf16")

#undef SPIO_WGMMA_M64N128K16
#undef SPIO_WGMMA_M64N256K16

/// D (64 x N) = A * B (+ D when accumulate) for N = 128 or 256 and T = __half or
/// __nv_bfloat16; TransB = 1 reads B as N-major (a K x N tile) instead of K-major, and
/// TransA = 1 reads A as M-major (a K x 64 tile: A^T stored row by row) instead of K-major.
template <int N, typename T, int TransB, int TransA = 0>
__device__ __forceinline__ void wgmma(float (&d)[N / 2], unsigned long long a_desc,
                                      unsigned long long b_desc, bool accumulate) {
    constexpr bool kHalf = spio::detail::is_same_v<T, __half>;
    static_assert(kHalf || spio::detail::is_same_v<T, __nv_bfloat16>,
                  "wgmma: T is __half or __nv_bfloat16");
    static_assert(N == 128 || N == 256, "wgmma: N is 128 or 256");
    static_assert((TransA == 0 || TransA == 1) && (TransB == 0 || TransB == 1),
                  "wgmma: TransA and TransB are 0 or 1");
    if constexpr (N == 128 && kHalf) {
        wgmma_m64n128k16_f16<TransB, TransA>(d, a_desc, b_desc, accumulate);
    } else if constexpr (N == 128) {
        wgmma_m64n128k16_bf16<TransB, TransA>(d, a_desc, b_desc, accumulate);
    } else if constexpr (kHalf) {
        wgmma_m64n256k16_f16<TransB, TransA>(d, a_desc, b_desc, accumulate);
    } else {
        wgmma_m64n256k16_bf16<TransB, TransA>(d, a_desc, b_desc, accumulate);
    }
}

}  // namespace spio::arch
