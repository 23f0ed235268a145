// cp.async kernels: 16-byte copies with zero fill, and a double-buffered pipeline.
#include "spio/arch/async_copy.cuh"  // cp_async_cg_16, commit and wait

// Thread t copies chunk t, reading src_bytes[t] of its 16 bytes; the rest must arrive as zeros.
// Shared memory is poisoned first so that a missing zero fill shows. Each thread then writes
// its neighbour's chunk, which only the wait and the barrier make visible. WAIT_ALL picks
// cp.async.wait_all over commit_group + wait_group 0.
extern "C" __global__ void async_copy_zero_fill(const uint4* src, const int* src_bytes,
                                                uint4* dst) {
    __shared__ uint4 smem[32];
    const int t = threadIdx.x;
    smem[t] = make_uint4(~0u, ~0u, ~0u, ~0u);
    __syncthreads();
    spio::arch::cp_async_cg_16(&smem[t], &src[t], static_cast<unsigned>(src_bytes[t]));
#if WAIT_ALL
    spio::arch::cp_async_wait_all();
#else
    spio::arch::cp_async_commit_group();
    spio::arch::cp_async_wait_group<0>();
#endif
    __syncthreads();
    dst[t] = smem[(t + 1) % 32];
}

// Stage s of `stages` is 32 chunks; stage s + 1 loads into the other buffer while stage s is
// read, with wait_group<1> keeping one group in flight. dst[32 * s + t] = src[32 * s + (t + 1) %
// 32].
extern "C" __global__ void async_copy_pipeline(const uint4* src, uint4* dst, int stages) {
    __shared__ uint4 buffer[2][32];
    const int t = threadIdx.x;
    spio::arch::cp_async_cg_16(&buffer[0][t], &src[t]);
    spio::arch::cp_async_commit_group();
    for (int s = 0; s < stages; ++s) {
        if (s + 1 < stages) {
            spio::arch::cp_async_cg_16(&buffer[(s + 1) % 2][t], &src[32 * (s + 1) + t]);
        }
        // An empty group on the last stage keeps "all but the newest group" meaning stage s.
        spio::arch::cp_async_commit_group();
        spio::arch::cp_async_wait_group<1>();
        __syncthreads();
        dst[32 * s + t] = buffer[s % 2][(t + 1) % 32];
        // Every thread has read buffer s % 2 before stage s + 2 overwrites it.
        __syncthreads();
    }
    spio::arch::cp_async_wait_all();
}
