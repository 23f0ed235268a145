// The wgrad kernel's warps: the rows of warps that walk images side by side, the producer
// warps that issue TMA rows, the barriers they meet at, the image and column a K row of a
// warp's fragments stands for, and the TMA rows' boxes and barriers. Part of
// conv2d_gw8_wgrad.cu's source, which includes it after conv2d_gw8_wgrad_shape.cuh;
// spio.kernels compiles them into one module (wgrad.compile_request).
#pragma once

// Threads of one warp row (a block walks kStepImages images side by side, kWarpImages to a row
// of warps).
constexpr int kRowThreads = kThreads / kWarpRows;

#include "conv2d_gw8_wgrad_segments.cuh"  // SegmentWalk, PartRow, WalkPlaces: the walks' rows

// Whether each warp row loads its own images' rows and meets at its own barrier
// (WgradConfig.image_sync; only with several warp rows).
constexpr bool kSplitImages = kImageSync && kWarpRows > 1;

// WgradConfig.producer (types.h defines CONV2D_GW8_PRODUCER_WARPS): past the kThreads that walk
// the rows, one more warp per sync group (the block, or each warp row with kSplitImages) whose
// first lane issues the group's TMA rows, each as soon as every warp of the group has let go of
// the slot (an mbarrier per slot that each warp arrives on), so that the walking warps meet at
// no barrier per row and drift apart: one warp's shared-memory loads overlap another's mma.
// Without TMA (before sm_90) those warps leave at once and the walk loads its rows as without
// them.
#ifdef CONV2D_GW8_PRODUCER_WARPS
constexpr int kProducerWarps = CONV2D_GW8_PRODUCER_WARPS;
#else
constexpr int kProducerWarps = 0;
#endif
constexpr int kBlockThreads = kThreads + 32 * kProducerWarps;
// The walking warps' own barrier where producer warps may have left (named barriers 1 ...
// kWarpRows are the warp rows').
constexpr int kWalkersBarrier = 15;
static_assert(kWarpRows < kWalkersBarrier, "the warp rows' barriers stay below the walkers'");

// Every walking warp of the block meets: the block's barrier, or with producer warps (which do
// not take part) the walkers' own.
__device__ __forceinline__ void sync_walkers() {
    if constexpr (kProducerWarps == 0) {
        __syncthreads();
    } else {
        asm volatile("bar.sync %0, %1;\n" ::"n"(kWalkersBarrier), "n"(kThreads) : "memory");
    }
}

// The warps of one row meet: with kSplitImages a named barrier (1 + row) of kRowThreads
// threads, as each row's warps load and read only their images' ring rows; else the block's
// barrier. (At 32x64x64x64 on an H200 the block-wide barrier of 16 warps was the largest stall
// of the walk; split, the pass went from 15.0 to 13.2 us. Blocks whose last row chunk is short
// lost, 128x64x56x64 58.7 -> 65.2 us, for a reason not yet found: the heuristic splits only
// where the row chunks are whole, wgrad_heuristic.default_config.)
__device__ __forceinline__ void sync_row(int warp_row) {
    if constexpr (!kSplitImages) {
        sync_walkers();
    } else {
        asm volatile("bar.sync %0, %1;\n" ::"r"(1 + warp_row), "r"(kRowThreads) : "memory");
    }
}

// The image (within the block's step) and the column (within the warp's strip) of K row k of a
// warp's fragments: with kWarpImages 2, rows 0-7 are the 8 columns of the warp row's first
// image and rows 8-15 those of its second (images no wider than 8 then fill whole K steps);
// with 4, rows 4i to 4i + 3 are the 4 columns of its image i.
__device__ __forceinline__ N k_row_image(N warp_row, X k) {
    if constexpr (kWarpImages == 1) {
        return warp_row;
    } else {
        return N(warp_row.get() * kWarpImages + k.get() / BLOCK_X::stride);
    }
}

__device__ __forceinline__ X k_row_column(X k) {
    if constexpr (kWarpImages == 1) {
        return k;
    } else {
        return X(k.get() % BLOCK_X::stride);
    }
}

// Shared memory ahead of the rings (wgrad_spec.TMA_BARRIER_BYTES): with WgradConfig.tma the
// rows' mbarriers, and the rings' start on 1024 bytes, as the 128-byte swizzle needs.
#ifdef CONV2D_GW8_TMA_LOADS
constexpr int kBarrierBytes = 1024;
#endif

#ifdef CONV2D_GW8_TMA
// TMA row loads: one thread per sync group (the block, or each warp row with kSplitImages)
// loads each ring row of its images as one box per image and tensor, completing
// on the slot's mbarrier. The TMA unit writes the rings' swizzle itself (its 32-, 64- and
// 128-byte swizzles of rows padded to 8 pixels are ring_slot at 2, 4 and 8 groups per pixel)
// and zeros for the rows, columns and images outside the tensors. The row barrier stays: a
// slot is refilled two rows after its last use, as with cp.async. (Pacing the slots by
// mbarriers instead, the producer waiting for every warp's release, ran slower: H200,
// 128x64x64x64 37.8 -> 39.4 us.)
constexpr int kSyncGroups = kSplitImages ? kWarpRows : 1;
constexpr int kProducerImages = kSplitImages ? kWarpImages : kStepImages;
constexpr unsigned kInputBoxBytes = (BLOCK_X::stride + kCols - 1) * kSlots * 16;
constexpr unsigned kGradBoxBytes = BLOCK_X::stride * kSlots * 16;
static_assert(kSyncGroups * kInputRing * 8 * (kProducerWarps > 0 ? 2 : 1) <= kBarrierBytes,
              "the barriers (with producer warps: each slot's full and empty) fit their space");
static_assert(kProducerWarps == 0 || kProducerWarps == kSyncGroups,
              "a producer warp per sync group");

// Thread 0 sets up each sync group's barriers of the ring slots, in the `bars` space before
// the rings at smem: each slot's full barrier (one arrival: the producer's, expecting its
// loads' bytes) and, with producer warps, in `empties` its empty barrier (one arrival from
// each warp of the group once done with the slot's row); then the block meets.
__device__ __forceinline__ void init_ring_barriers(unsigned long long* bars,
                                                   unsigned long long* empties,
                                                   const unsigned char* smem) {
    constexpr unsigned kGroupWarps = (kSplitImages ? kRowThreads : kThreads) / 32;
    if (threadIdx.x == 0) {
        // The swizzles are those of ring_slot only from a 1024-byte boundary, which the
        // dynamic shared memory of a kernel without static shared memory starts on.
        if ((spio::arch::shared_address(smem) & 1023) != 0) __trap();
        for (int i = 0; i < kSyncGroups * kInputRing; ++i) spio::arch::mbarrier_init(&bars[i], 1);
        if constexpr (kProducerWarps > 0) {
            for (int i = 0; i < kSyncGroups * kInputRing; ++i) {
                spio::arch::mbarrier_init(&empties[i], kGroupWarps);
            }
        }
        spio::arch::mbarrier_init_fence();
    }
    __syncthreads();
}
#endif
