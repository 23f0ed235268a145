// L2 cache control: dropping dead lines without writing them back.
//
// A kernel that hands data to the next one through global memory (partial sums for a
// reduction, say) leaves those lines dirty in L2 once they are read. Evicted later, by
// whatever streams through L2 next, they are written back to DRAM: bytes nobody reads, in the
// DRAM bandwidth of the kernels that run then. discard_line drops a 128-byte line from L2
// instead, without the write-back. The line's contents are then undefined (a weak write of
// indeterminate values), so discard only lines that no one reads again before writing them,
// and only whole lines of your own data: the address is 128-byte aligned and the 128 bytes
// from it are yours.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "spio/arch/l2.cuh needs sm_80 or newer (discard.global.L2)"
#endif

namespace spio::arch {

// Bytes of the line discard_line drops.
constexpr int kL2LineBytes = 128;

// Drop the 128-byte line at line (global, 128-byte aligned) from L2 without writing it back;
// its contents become undefined.
__device__ __forceinline__ void discard_line(const void* line) {
    asm volatile("discard.global.L2 [%0], 128;\n" ::"l"(__cvta_generic_to_global(line)) : "memory");
}

}  // namespace spio::arch
