// How the wgrad kernel's blocks add up their weights' sums after the walk: every warp's
// accumulators (and bias sums) staged in shared memory, then 16-byte cells added in registers
// over the warps' slabs, and with WgradConfig.atomic_sums added into the one sum atomically.
// Part of
// conv2d_gw8_wgrad.cu's source, which includes it after its own constants; spio.kernels
// compiles them into one module (wgrad.compile_request).
#pragma once

// sum += v, element by element.
__device__ __forceinline__ void add_to(float4& sum, const float4& v) {
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
}

#ifdef CONV2D_GW8_ATOMIC_SUMS
// *address += v with atomic adds: one 16-byte reduction on sm_90 and newer, four 4-byte ones
// before (the order of the blocks' additions is not fixed either way).
__device__ __forceinline__ void add_atomically(float* address, const float4& v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float4*>(address), v);
#else
    atomicAdd(address, v.x);
    atomicAdd(address + 1, v.y);
    atomicAdd(address + 2, v.z);
    atomicAdd(address + 3, v.w);
#endif
}

// Cells from one block's first add to the next block's: 17 whole 128-byte lines, so that a
// warp's 32 adds still cover 4 whole lines and neighbouring blocks start far apart.
constexpr int kStaggerCells = 17 * 8;
#endif

// Every warp's accumulators to shared memory (the rings' memory, free after the walk) in
// grad_w's order, a slab of the block's weights per (row, column strip) of warps; the dropped
// half of an odd S's last pair is not written. The kernel then adds the slabs up. (Scalar
// stores straight from the fragments' order wrote 4 bytes to each of 4 sectors per store, and
// the blocks' stores, all at the end of the walk, took ~2.5 us.)
__device__ __forceinline__ void store_slabs(unsigned char* smem, AccTile acc, ThreadIndex thread,
                                            int lane) {
    const auto warp_slab = SmemPartials(reinterpret_cast<float*>(smem))[thread];
#pragma unroll
    for (auto g : spio::range(AccTile::size<G>())) {
#pragma unroll
        for (int pair = 0; pair < kPairs; ++pair) {
#pragma unroll
            for (int e = 0; e < AccFrag::size(); ++e) {
                // Row tc of the C fragment is (column of the pair, input channel):
                // tc = 8 * half + c; its column is the output channel.
                const int tc = AccFrag::row_index(lane, e);
                const int s = 2 * (pair % kColumnPairs) + tc / 8;
                if (s < kCols) {
                    *warp_slab[g][AccFrag::col(lane, e)][R(pair / kColumnPairs)][S(s)][C(tc % 8)] =
                        acc[g][PAIR(pair)]->get(e);
                }
            }
        }
    }
}

#ifdef CONV2D_GW8_BIAS_GRAD
// The warp's bias sums to shared memory, after the slabs: each quad of lanes holds one output
// channel's (the butterfly leaves the same sum on all four).
__device__ __forceinline__ void store_bias_sums(unsigned char* smem,
                                                const float (&bias_sums)[AccTile::size<G>().get()],
                                                ThreadIndex thread, int lane) {
    const auto smem_bias = SmemBias(reinterpret_cast<float*>(smem) + SmemPartials::storage_size());
    const auto warp_bias = smem_bias[thread];  // its row, column strip and first group
#pragma unroll
    for (auto g : spio::range(AccTile::size<G>())) {
        float sum = bias_sums[g.get()];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        if (lane % 4 == 0) *warp_bias[g][K(lane / 4)] = sum;
    }
}

#endif
