// Asynchronous 16-byte copies from global to shared memory: cp.async.cg, commit and wait groups.
//
// A thread issues copies, closes them into a group with cp_async_commit_group(), and later waits
// until at most N of its most recent groups are still in flight with cp_async_wait_group<N>().
// The wait covers only the calling thread's copies: a __syncthreads() after it makes the data
// visible to the whole block. Double buffering, for example:
//
//     spio::arch::cp_async_cg_16(smem_next, gmem_next);   // stage k + 1
//     spio::arch::cp_async_commit_group();
//     spio::arch::cp_async_wait_group<1>();               // stage k has landed
//     __syncthreads();
//
// Zero fill: cp_async_cg_16(dst, src, n) reads only the first n of the 16 bytes (0 <= n <= 16)
// and writes zeros to the rest, so cp_async_cg_16(dst, src, in_bounds ? 16 : 0) pads a tile
// edge without a branch. With n == 0 nothing is read, but src should still be a valid global
// address (pass the tensor's base, say) so that no out-of-range address is formed.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "spio/arch/async_copy.cuh needs sm_80 or newer (cp.async)"
#endif

namespace spio::arch {

// Copy the first src_bytes of 16 bytes at src (global) to dst (shared), zero-filling the rest.
// Both addresses are 16-byte aligned.
__device__ __forceinline__ void cp_async_cg_16(void* dst, const void* src,
                                               unsigned src_bytes = 16) {
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const unsigned long long src_global =
        static_cast<unsigned long long>(__cvta_generic_to_global(src));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :
                 : "r"(dst_shared), "l"(src_global), "r"(src_bytes)
                 : "memory");
}

// Close this thread's copies issued since the last commit into one group.
__device__ __forceinline__ void cp_async_commit_group() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
    static_assert(N >= 0, "cp_async_wait_group<N>: N counts pending groups and cannot be negative");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Wait for all of this thread's copies, committed or not.
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace spio::arch
