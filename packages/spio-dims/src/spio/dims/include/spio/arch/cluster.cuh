// Thread-block clusters (sm_90): a block's rank, the cluster-wide barrier, and reads of another
// block's shared memory (distributed shared memory).
//
// A kernel declared with __cluster_dims__(kBlocks, 1, 1) runs its blocks kBlocks at a time on one
// GPC; each block can read the shared memory of the others while all of them are alive. The
// usual exchange: every block writes its part to its own shared memory, cluster_sync(), each
// block reads the parts it needs from the others with load_from_block(), and a second
// cluster_sync() keeps every block (and so its shared memory) alive until all reads are done:
//
//     smem[i] = mine;
//     spio::arch::cluster_sync();
//     float sum = 0.0f;
//     for (unsigned b = 0; b < kBlocks; ++b) sum += spio::arch::load_from_block(&smem[i], b);
//     spio::arch::cluster_sync();
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "spio/arch/cluster.cuh needs sm_90 or newer (thread-block clusters)"
#endif

namespace spio::arch {

// The calling block's rank within its cluster, 0 ... blocks per cluster - 1.
__device__ __forceinline__ unsigned cluster_block_rank() {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    return rank;
}

// Barrier of every thread of every block of the cluster. Shared-memory writes made before it
// (release) are visible to reads from any block of the cluster after it (acquire). Every
// thread must call it (.aligned), and not from divergent code.
__device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n"
        "barrier.cluster.wait.acquire.aligned;\n" ::
            : "memory");
}

// The address in block `rank`'s shared memory of what `local` points to in this block's.
__device__ __forceinline__ unsigned cluster_shared_address(const void* local, unsigned rank) {
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(local));
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(address), "r"(rank));
    return remote;
}

// Read the float at `local`'s offset in block `rank`'s shared memory.
__device__ __forceinline__ float load_from_block(const float* local, unsigned rank) {
    float value;
    asm volatile("ld.shared::cluster.f32 %0, [%1];\n"
                 : "=f"(value)
                 : "r"(cluster_shared_address(local, rank))
                 : "memory");
    return value;
}

// Read the 16-byte aligned float4 at `local`'s offset in block `rank`'s shared memory.
__device__ __forceinline__ float4 load_from_block(const float4* local, unsigned rank) {
    float4 value;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(value.x), "=f"(value.y), "=f"(value.z), "=f"(value.w)
                 : "r"(cluster_shared_address(local, rank))
                 : "memory");
    return value;
}

}  // namespace spio::arch
