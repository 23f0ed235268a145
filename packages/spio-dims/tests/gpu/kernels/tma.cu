// TMA kernels: a box of a 2-D or 4-D tensor map loaded into shared memory (its bytes copied
// out as they lie there, swizzle and zero fill included), and a box loaded and stored back
// through a second map (the store undoes the swizzle and skips what lies outside the tensor).
// BOX_BYTES: the box's size; the box sits on 1024 bytes, as the 128-byte swizzle needs.
#include "spio/arch/tma.cuh"

__device__ __forceinline__ void load_box(unsigned char* box, const spio::arch::TensorMap* map,
                                         unsigned long long* full, int x, int y, int z, int w) {
    if (threadIdx.x == 0) {
        spio::arch::mbarrier_init(full, 1);
        spio::arch::mbarrier_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        spio::arch::mbarrier_arrive_expect_tx(full, BOX_BYTES);
#if RANK == 2
        spio::arch::tma_load(box, map, full, x, y);
#else
        spio::arch::tma_load(box, map, full, x, y, z, w);
#endif
    }
    spio::arch::mbarrier_wait_parity(full, 0);
}

// out[i] = byte i of the box in shared memory after the load at (x, y[, z, w]).
extern "C" __global__ void tma_load_bytes(const __grid_constant__ spio::arch::TensorMap map,
                                          unsigned char* out, int x, int y, int z, int w) {
    __shared__ __align__(1024) unsigned char box[BOX_BYTES];
    __shared__ unsigned long long full;
    load_box(box, &map, &full, x, y, z, w);
    for (int i = threadIdx.x; i < BOX_BYTES; i += blockDim.x) out[i] = box[i];
}

// The box at (x, y[, z, w]) of src_map, stored to the same box of dst_map after every thread
// added 1 to each 16-bit element in shared memory (ordinary stores the TMA store must see).
extern "C" __global__ void tma_round_trip(const __grid_constant__ spio::arch::TensorMap src_map,
                                          const __grid_constant__ spio::arch::TensorMap dst_map,
                                          int x, int y, int z, int w) {
    __shared__ __align__(1024) unsigned char box[BOX_BYTES];
    __shared__ unsigned long long full;
    load_box(box, &src_map, &full, x, y, z, w);
    auto* elements = reinterpret_cast<unsigned short*>(box);
    for (int i = threadIdx.x; i < BOX_BYTES / 2; i += blockDim.x) elements[i] += 1;
    spio::arch::fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
#if RANK == 2
        spio::arch::tma_store(&dst_map, box, x, y);
#else
        spio::arch::tma_store(&dst_map, box, x, y, z, w);
#endif
        spio::arch::bulk_commit_group();
        spio::arch::bulk_wait_group<0>();
    }
}
