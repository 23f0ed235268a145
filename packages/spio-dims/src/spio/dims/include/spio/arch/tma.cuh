// Tensor-memory-accelerator (TMA) copies (sm_90): one thread moves a whole box of a tensor
// between global and shared memory, with the box's elements outside the tensor read as zeros
// (negative coordinates included) and not written on the way back.
//
// The host describes the tensor once with a tensor map (cuTensorMapEncodeTiled): its dims and
// strides, the box one copy moves, and the shared-memory swizzle. With cuda.core:
//
//     view = cuda.core.utils.StridedMemoryView.from_dlpack(tensor, stream_ptr=-1)
//     tensor_map = view.as_tensor_map(box_dim=(rows, cols), swizzle=...)
//
// and spio.jit passes it by value to a `const __grid_constant__ spio::arch::TensorMap`
// parameter (the map must stay in parameter space: its address is what the copies take).
//
// Loads complete on an mbarrier (mbarrier.cuh), which counts the box's bytes, the zeros
// included:
//
//     if (threadIdx.x == 0) {
//         spio::arch::mbarrier_arrive_expect_tx(&full, kBoxBytes);
//         spio::arch::tma_load(smem_box, &map, &full, col, row);   // innermost dim first
//     }
//     spio::arch::mbarrier_wait_parity(&full, phase & 1);
//
// Stores read shared memory written by ordinary stores, so those writes must first be made
// visible to the TMA unit: every writing thread fences, the block meets, one thread stores:
//
//     spio::arch::fence_proxy_async_shared();
//     __syncthreads();
//     if (threadIdx.x == 0) {
//         spio::arch::tma_store(&map, smem_box, col, row);
//         spio::arch::bulk_commit_group();
//         spio::arch::bulk_wait_group_read<0>();  // before the box's memory is reused
//     }
//
// Coordinates: the innermost one, times the element size, is a multiple of 16 bytes, and a
// store's are all >= 0 (a stored box may overhang the tensor's end, not its start). Loads
// take negative ones. (On an H200 a load at an innermost offset of 8 bytes, or a store at a
// negative coordinate, stops the kernel with an illegal instruction.)
//
// Alignment: a box in shared memory starts on 128 bytes, and on the swizzle's repeat (1024
// bytes for SWIZZLE_128B, 512 for 64B, 256 for 32B) for the swizzle to be the documented one:
// 16-byte chunk c of 128-byte row r (SWIZZLE_128B) lands at chunk c ^ (r % 8).
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "spio/arch/tma.cuh needs sm_90 or newer (cp.async.bulk.tensor)"
#endif

#include "mbarrier.cuh"
#include "shared_address.cuh"

namespace spio::arch {

/// The 128 opaque bytes of a CUtensorMap, as a kernel parameter receives them.
struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

static_assert(sizeof(TensorMap) == 128, "a CUtensorMap is 128 bytes");

namespace detail {

__device__ __forceinline__ unsigned long long map_address(const TensorMap* map) {
    return reinterpret_cast<unsigned long long>(map);
}

}  // namespace detail

/// Load the box of `map` at element coordinates c0, c1, ... (innermost dimension first, 1 to
/// 5 of them, as many as the map has dims) into shared memory at dst, completing on bar.
template <typename... Coords>
__device__ __forceinline__ void tma_load(void* dst, const TensorMap* map, unsigned long long* bar,
                                         Coords... coords) {
    static_assert(sizeof...(Coords) >= 1 && sizeof...(Coords) <= 5, "1 to 5 coordinates");
    const int c[5] = {static_cast<int>(coords)...};
    const unsigned d = shared_address(dst);
    const unsigned b = shared_address(bar);
    const unsigned long long m = detail::map_address(map);
    if constexpr (sizeof...(Coords) == 1) {
        asm volatile(
            "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%3}], [%2];\n" ::"r"(d),
            "l"(m), "r"(b), "r"(c[0])
            : "memory");
    } else if constexpr (sizeof...(Coords) == 2) {
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(d),
            "l"(m), "r"(b), "r"(c[0]), "r"(c[1])
            : "memory");
    } else if constexpr (sizeof...(Coords) == 3) {
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(d),
            "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2])
            : "memory");
    } else if constexpr (sizeof...(Coords) == 4) {
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(d),
            "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
            : "memory");
    } else {
        asm volatile(
            "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n" ::"r"(d),
            "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
            : "memory");
    }
}

/// Store shared memory at src to the box of `map` at element coordinates c0, c1, ...
/// (innermost first); elements outside the tensor are not written. Completes in the bulk
/// group of this thread's next bulk_commit_group().
template <typename... Coords>
__device__ __forceinline__ void tma_store(const TensorMap* map, const void* src, Coords... coords) {
    static_assert(sizeof...(Coords) >= 1 && sizeof...(Coords) <= 5, "1 to 5 coordinates");
    const int c[5] = {static_cast<int>(coords)...};
    const unsigned s = shared_address(src);
    const unsigned long long m = detail::map_address(map);
    if constexpr (sizeof...(Coords) == 1) {
        asm volatile(
            "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%2}], [%1];\n" ::"l"(
                m),
            "r"(s), "r"(c[0])
            : "memory");
    } else if constexpr (sizeof...(Coords) == 2) {
        asm volatile(
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::
                "l"(m),
            "r"(s), "r"(c[0]), "r"(c[1])
            : "memory");
    } else if constexpr (sizeof...(Coords) == 3) {
        asm volatile(
            "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], "
            "[%1];\n" ::"l"(m),
            "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2])
            : "memory");
    } else if constexpr (sizeof...(Coords) == 4) {
        asm volatile(
            "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], "
            "[%1];\n" ::"l"(m),
            "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
            : "memory");
    } else {
        asm volatile(
            "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group "
            "[%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(m),
            "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
            : "memory");
    }
}

/// Close this thread's TMA stores issued since the last commit into one bulk group.
__device__ __forceinline__ void bulk_commit_group() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Wait until at most N of this thread's bulk groups are still reading shared memory (their
/// sources may then be overwritten; the global writes may still be in flight).
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
    static_assert(N >= 0, "bulk_wait_group_read<N>: N counts pending groups");
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

/// Wait until at most N of this thread's bulk groups are still in flight (their global
/// writes done).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
    static_assert(N >= 0, "bulk_wait_group<N>: N counts pending groups");
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/// Order this thread's ordinary shared-memory writes before later TMA (asynchronous proxy)
/// reads of them: each writing thread calls it before the barrier that precedes tma_store.
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace spio::arch
