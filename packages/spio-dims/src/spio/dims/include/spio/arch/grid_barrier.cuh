// A barrier across every block of a grid, for kernels whose blocks are all resident at once: a
// cooperative launch (spio.jit.launch(..., cooperative=True)), where the driver places the whole
// grid or refuses it. A grid whose blocks cannot all be resident would wait forever.
//
// The state is one 32-bit counter in global memory that the caller provides. It must read as 0
// (or 0x80000000) before the first barrier on it, and every completed barrier leaves it so:
// the blocks add 1 each, except block 0, which adds 0x80000000 - (blocks - 1), so that the
// counter's top bit flips exactly when the last block arrives, and its low 31 bits return to 0.
// A block waits for its own arrival value's top bit to flip. Zero the counter once when
// allocating it; launches after that reuse it as it is. One counter serves one grid at a time:
// grids that may run concurrently (other streams) need their own.
//
// Memory: writes a block made before grid_barrier are visible to every block after it (the
// arriving thread fences after the block's barrier; the waiting one fences before releasing
// its block). Read what other blocks wrote through the L2 (plain or .cg loads), not through
// the non-coherent read-only path (__ldg, const __restrict__ pointers the compiler may use it
// for), which may hold lines from before the barrier.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "spio/arch/grid_barrier.cuh needs sm_70 or newer (acquire loads, __nanosleep)"
#endif

namespace spio::arch {

namespace detail {

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* address) {
    unsigned int value;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(address) : "memory");
    return value;
}

}  // namespace detail

// Wait until every block of the grid has called grid_barrier(counter) as often as this one.
// Every thread of every block calls it (it contains __syncthreads).
__device__ __forceinline__ void grid_barrier(unsigned int* counter) {
    constexpr unsigned int kTopBit = 0x80000000u;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
        const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
        __threadfence();
        const unsigned int arrived = atomicAdd(counter, first ? kTopBit - (blocks - 1) : 1u);
        // The last blocks arrive within microseconds; a short sleep between polls keeps the
        // waiting blocks' loads from crowding the L2 slice that holds the counter.
        while (((detail::load_acquire(counter) ^ arrived) & kTopBit) == 0) __nanosleep(64);
        __threadfence();
    }
    __syncthreads();
}

}  // namespace spio::arch
