// Shared-memory mbarriers (sm_90): a barrier object that completes a phase when a set number
// of threads have arrived on it and every byte announced to it by asynchronous copies (TMA,
// tma.cuh) has landed. Unlike __syncthreads(), the threads that wait need not be the ones that
// arrive, so one thread can load for a whole block and the rest wait only for the data.
//
// Phases alternate parity 0, 1, 0, ...: the k-th completion of a barrier (k = 0, 1, ...) is
// waited for with parity k & 1. A ring of buffers, each with a barrier, waits for the k-th
// fill of slot s = i % ring (i = s + k * ring) with parity (i / ring) & 1.
//
//     __shared__ unsigned long long full;               // 8 bytes, 8-byte aligned
//     if (threadIdx.x == 0) {
//         spio::arch::mbarrier_init(&full, 1);          // one arrival per phase
//         spio::arch::mbarrier_init_fence();
//     }
//     __syncthreads();
//     if (threadIdx.x == 0) {
//         spio::arch::mbarrier_arrive_expect_tx(&full, bytes);  // the arrival, and the bytes
//         spio::arch::tma_load(tile, &map, &full, x, y);        // that complete the phase
//     }
//     spio::arch::mbarrier_wait_parity(&full, 0);
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "spio/arch/mbarrier.cuh needs sm_90 or newer (mbarrier expect_tx and try_wait)"
#endif

#include "shared_address.cuh"

namespace spio::arch {

/// Initialise an mbarrier whose phases complete when `arrivals` threads have arrived (and
/// every byte announced to the phase has landed).
__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)),
                 "r"(arrivals)
                 : "memory");
}

/// Make mbarriers initialised by this thread visible to the asynchronous proxy (the TMA unit)
/// and to the cluster; a __syncthreads() after it publishes them to the block.
__device__ __forceinline__ void mbarrier_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Arrive on bar (one of the arrivals its current phase waits for).
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar))
                 : "memory");
}

/// Arrive on bar and announce `bytes` that asynchronous copies will deliver to its current
/// phase: the phase completes when the arrivals are in and those bytes have landed.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
        "r"(bytes)
        : "memory");
}

/// Wait until the phase of bar with parity `parity` (0 or 1) has completed.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned long long* bar, unsigned parity) {
    const unsigned address = shared_address(bar);
    unsigned done;
    do {
        // try_wait suspends the thread for a while in hardware before it reports "not yet",
        // so the loop does not hammer shared memory.
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            " selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(address), "r"(parity)
            : "memory");
    } while (!done);
}

}  // namespace spio::arch
