// Experiment (seventy-fourth session, docs/benchmarks.md): conv2d_gw8 fprop (3 x 3, padding 1,
// 64 channels, images 64 pixels wide, fp16) on Hopper's warpgroup tensor cores (sm_90a). One
// warpgroup a block walks CHUNK output rows of one image across its whole width, so an output
// row is 64 pixels: the M of wgmma m64n16k16. Its A is read straight from a ring of input rows
// in shared memory, 128-byte swizzled (a tap's column shift is a descriptor 128 bytes further:
// the swizzle follows the absolute address bits); its B is one tap's weights of a pair of
// groups, block-diagonal in 16 x 16, so half of the products are zeros. Output row d is 36
// wgmmas (3 x 3 taps x 4 pairs) into 32 accumulators a thread, committed as one group; while
// they run, the warps store row d - 1 (wgmma_wait_group<1>). Timed by
// h200_fprop_wgmma_s74_check.py; correct outputs (fp32 reference, bias included), 0.82x the
// shipped kernel at best.
//
// Macros (defaults in brackets):
//   CHUNK       output rows a block [16]; IMG_H image height [64]
//   RING        slots of input rows [6]
//   LOADER      0: one thread loads each row by TMA, the slots paced by full and empty
//               mbarriers; 1: every thread cp.async's 4 of a row's 16-byte cells, AHEAD rows
//               ahead [4], a named barrier a row [0]
//   STORE_MODE  0: each warp stages its 16 pixels and stores them by TMA; 1: staged, then
//               16-byte stores of its lanes; 2: 4-byte stores straight from the accumulators [0]
//   PAIRS       pairs of output rows a loop trip [1]: ptxas serializes every wgmma (C7514)
//               when a loop's back edge carries a group in flight whose accumulators are read
//               after it, so each trip ends with wgmma_wait_group<0>
//   ALT         1: odd chunks walk upward [0]
//   A_BASE      1: A descriptors carry the swizzle's base offset, (address >> 7) & 7 [0]:
//               wrong outputs, so the hardware swizzles on absolute addresses
//   MIN_BLOCKS  __launch_bounds__'s blocks an SM [1]
//   Timing probes (wrong or no outputs): NO_MMA, NO_STORE, MMA_SHARE 2 or 4 (only the first
//   4 / MMA_SHARE pairs multiplied), SPLIT (TMA boxes a row), BOXW and XOFF (the box's width
//   and first column), PREFETCH_MAP (prefetch.tensormap first).
#include <cuda_fp16.h>

#include "spio/arch/async_copy.cuh"
#include "spio/arch/grid_dependency.cuh"
#include "spio/arch/mbarrier.cuh"
#include "spio/arch/tma.cuh"
#include "spio/arch/wgmma.cuh"

#ifndef CHUNK
#define CHUNK 16
#endif
#ifndef RING
#define RING 6
#endif
#ifndef ALT
#define ALT 0
#endif
#ifndef A_BASE
#define A_BASE 0
#endif
#ifndef NO_MMA
#define NO_MMA 0
#endif
#ifndef IMG_H
#define IMG_H 64
#endif
#ifndef PAIRS
#define PAIRS 1
#endif
#ifndef STORE_MODE
#define STORE_MODE 0
#endif
#ifndef SPLIT
#define SPLIT 1
#endif
#ifndef NO_STORE
#define NO_STORE 0
#endif
#ifndef PREFETCH_MAP
#define PREFETCH_MAP 0
#endif
#ifndef BOXW
#define BOXW 66
#endif
#ifndef XOFF
#define XOFF -1
#endif
#ifndef LOADER
#define LOADER 0
#endif
#ifndef AHEAD
#define AHEAD 4
#endif
#ifndef MMA_SHARE
#define MMA_SHARE 1
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif

constexpr int kWidth = 64;              // pixels a row: wgmma's M
constexpr int kBoxPixels = kWidth + 2;  // the row and its halo columns
constexpr int kSlotBytes = (kBoxPixels * 128 + 1023) / 1024 * 1024;
constexpr int kBarrierBytes = 1024;
constexpr int kTapBytes = 512;  // one pair's 16 x 16 B tile
constexpr int kWeightBytes = 9 * 4 * kTapBytes;
constexpr int kStageBytes = 16 * 128;  // a warp's 16 pixels x 64 channels
constexpr int kRingOffset = kBarrierBytes;
constexpr int kWeightOffset = kRingOffset + RING * kSlotBytes;
constexpr int kStageOffset = kWeightOffset + kWeightBytes;
constexpr int kSmemBytes = kStageOffset + 4 * 2 * kStageBytes;
static_assert(kSmemBytes <= 227 * 1024, "fits an SM");
static_assert(RING >= 4, "three rows in use and one loading");
static_assert(kWeightOffset % 1024 == 0 && kStageOffset % 1024 == 0, "swizzle alignment");

__device__ __forceinline__ void wgmma_m64n16k16(float (&d)[8], unsigned long long a,
                                                unsigned long long b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7])
        : "l"(a), "l"(b), "r"(accumulate));
}

extern "C" __global__ void __launch_bounds__(128, MIN_BLOCKS)
    fprop_wgmma(__half* __restrict__ y_ptr, const __half* __restrict__ x_ptr,
                const __half* __restrict__ w_ptr, const float* __restrict__ bias_ptr,
                const __grid_constant__ spio::arch::TensorMap x_map,
                const __grid_constant__ spio::arch::TensorMap y_map) {
    extern __shared__ __align__(1024) unsigned char smem[];
    auto* const full = reinterpret_cast<unsigned long long*>(smem);
    auto* const empty = full + RING;
    unsigned char* const ring = smem + kRingOffset;
    __half* const wsmem = reinterpret_cast<__half*>(smem + kWeightOffset);
    const int thread = static_cast<int>(threadIdx.x);
    const int warp = thread / 32;
    const int lane = thread % 32;

    constexpr int kChunks = (IMG_H + CHUNK - 1) / CHUNK;
    const int image = static_cast<int>(blockIdx.x) / kChunks;
    const int chunk = static_cast<int>(blockIdx.x) % kChunks;
    const int block_y = chunk * CHUNK;
    static_assert(IMG_H % CHUNK == 0 && CHUNK % 2 == 0, "whole chunks of pairs of rows");
    constexpr int rows = CHUNK;
    const int walk_rows = rows + 2;
    const bool up = ALT && chunk % 2 == 1;
    const int first_y = up ? block_y + rows : block_y - 1;
    const auto input_row = [&](int j) { return up ? first_y - j : first_y + j; };

    if (thread == 0) {
        if ((spio::arch::shared_address(ring) & 1023) != 0) __trap();
        for (int s = 0; s < RING; ++s) {
            spio::arch::mbarrier_init(&full[s], 1);
            spio::arch::mbarrier_init(&empty[s], 4);
        }
        spio::arch::mbarrier_init_fence();
    }
    __syncthreads();
    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();

    const auto load_row = [&](int j) {
        const int s = j % RING;
        spio::arch::mbarrier_arrive_expect_tx(&full[s], BOXW * 128);
        constexpr int kPart = BOXW / SPLIT;
        static_assert(kPart * SPLIT == BOXW, "equal parts");
#pragma unroll
        for (int part = 0; part < SPLIT; ++part) {
            spio::arch::tma_load(ring + s * kSlotBytes + (part * kPart + XOFF + 1) * 128, &x_map,
                                 &full[s], 0, part * kPart + XOFF, input_row(j), image);
        }
    };
#if PREFETCH_MAP
    if (thread == 0) {
        asm volatile(
            "prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&x_map))
            : "memory");
    }
#endif
#if LOADER == 0
    if (thread == 0) {
        for (int j = 0; j < min(RING, walk_rows); ++j) load_row(j);
    }
#else
    // LOADER 1: every thread copies 4 of a row's 512 16-byte cells by cp.async, swizzled as
    // TMA would (cell c of slot pixel i at c ^ (i % 8)); the halo columns are zero for good.
    static_assert(RING >= AHEAD + 3, "the slot a row is copied into is two groups old");
    static_assert(AHEAD >= 3, "a row ahead at least");
    for (int i = thread; i < RING * 2 * 8; i += 128) {
        const int slot = i / 16;
        const int pixel = (i / 8) % 2 == 0 ? 0 : kBoxPixels - 1;
        *reinterpret_cast<uint4*>(ring + slot * kSlotBytes + pixel * 128 + (i % 8) * 16) =
            make_uint4(0, 0, 0, 0);
    }
    const auto copy_row = [&](int j) {
        if (j < walk_rows) {
            unsigned char* const slot = ring + (j % RING) * kSlotBytes;
            const int y = input_row(j);
            const bool inside = y >= 0 && y < IMG_H;
            const __half* const row =
                x_ptr + (static_cast<size_t>(image) * IMG_H + (inside ? y : 0)) * kWidth * 64;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const int cell = thread + 128 * k;
                const int pixel = cell / 8 + 1;
                unsigned char* const to = slot + pixel * 128 + (((cell % 8) ^ (pixel % 8)) << 4);
                if (inside) {
                    spio::arch::cp_async_cg_16(to, row + cell * 8, 16);
                } else {
                    *reinterpret_cast<uint4*>(to) = make_uint4(0, 0, 0, 0);
                }
            }
        }
        spio::arch::cp_async_commit_group();
    };
    for (int j = 0; j < AHEAD; ++j) copy_row(j);
#endif

    // B tiles: for tap t = 3 r + s and pair p, the 16 x 16 matrix of (output channel n, input
    // channel k) of groups 2p and 2p + 1, K-major without swizzle: core matrices of 8 n x 8
    // k (128 bytes), 128 bytes apart along K and 256 along N, zero off the diagonal. Spio's
    // weights are c x r x s x 8, so row n of a diagonal core matrix is 16 bytes of them (the
    // 8 inputs of output channel 16 p + n at tap (r, s)): the tiles are built from 16-byte
    // loads, all issued before any is stored. (Built from 2-byte loads, 72 a thread in a
    // dependent chain, they took about 13 us at the start of every block: runs 1 to 6.)
    // An upward walk flips the filter top to bottom (its row r is the layer's 2 - r).
    constexpr int kRowCells = 9 * 4 * 32;  // tiles x (4 core matrices x 8 rows)
    static_assert(kRowCells % 128 == 0, "whole rounds");
    uint4 cells[kRowCells / 128];
#pragma unroll
    for (int k = 0; k < kRowCells / 128; ++k) {
        const int i = thread + 128 * k;
        const int tile = i / 32;
        const int core = (i % 32) / 8;
        const int n = (core / 2) * 8 + i % 8;
        const int t = tile / 4;
        const int p = tile % 4;
        const int r = up ? 2 - t / 3 : t / 3;
        cells[k] = make_uint4(0, 0, 0, 0);
        if (core / 2 == core % 2) {
            cells[k] =
                *reinterpret_cast<const uint4*>(w_ptr + ((16 * p + n) * 9 + 3 * r + t % 3) * 8);
        }
    }
#pragma unroll
    for (int k = 0; k < kRowCells / 128; ++k) {
        reinterpret_cast<uint4*>(wsmem)[thread + 128 * k] = cells[k];
    }
    spio::arch::fence_proxy_async_shared();
    __syncthreads();

    // This thread's columns of each pair: 16 p + 8 j + 2 (lane % 4) + {0, 1}.
    float bias[4][2][2];
#pragma unroll
    for (int p = 0; p < 4; ++p) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                bias[p][j][h] = bias_ptr ? bias_ptr[16 * p + 8 * j + 2 * (lane % 4) + h] : 0.0f;
            }
        }
    }

    const unsigned ring_address = spio::arch::shared_address(ring);
    const unsigned w_address = spio::arch::shared_address(wsmem);
    const auto a_desc = [&](int slot, int s, int p) {
        const unsigned address = ring_address + slot * kSlotBytes + s * 128 + p * 32;
        unsigned long long desc = static_cast<unsigned long long>((address & 0x3ffff) >> 4) |
                                  1ull << 16 | (1024ull >> 4) << 32 | 1ull << 62;
        if (A_BASE) desc |= static_cast<unsigned long long>((address >> 7) & 7) << 49;
        return desc;
    };
    const auto b_desc = [&](int t, int p) {
        const unsigned address = w_address + (t * 4 + p) * kTapBytes;
        return static_cast<unsigned long long>((address & 0x3ffff) >> 4) | (128ull >> 4) << 16 |
               (256ull >> 4) << 32;
    };

    unsigned char* const stage_base = smem + kStageOffset + warp * 2 * kStageBytes;
    const auto store_row = [&](int d, float (&acc)[4][8]) {
        if (NO_STORE) return;
        unsigned char* const stage = stage_base + (d % 2) * kStageBytes;
#if STORE_MODE == 0
        if (lane == 0 && d >= 2) spio::arch::bulk_wait_group_read<1>();
#endif
        __syncwarp();
#pragma unroll
        for (int p = 0; p < 4; ++p) {
#pragma unroll
            for (int e = 0; e < 8; e += 2) {
                const int j = e / 4;
                const int pixel = lane / 4 + 8 * ((e % 4) / 2);
                const int cell = 2 * p + j;
                const __half2 pair =
                    __floats2half2_rn(acc[p][e] + bias[p][j][0], acc[p][e + 1] + bias[p][j][1]);
#if STORE_MODE == 2
                const int y2 = up ? block_y + rows - 1 - d : block_y + d;
                *reinterpret_cast<__half2*>(
                    y_ptr +
                    ((static_cast<size_t>(image) * IMG_H + y2) * kWidth + 16 * warp + pixel) * 64 +
                    8 * cell + 2 * (lane % 4)) = pair;
#else
                *reinterpret_cast<__half2*>(stage + pixel * 128 + ((cell ^ (pixel % 8)) << 4) +
                                            4 * (lane % 4)) = pair;
#endif
            }
        }
        const int y = up ? block_y + rows - 1 - d : block_y + d;
#if STORE_MODE == 0
        spio::arch::fence_proxy_async_shared();
        __syncwarp();
        if (lane == 0) {
            spio::arch::tma_store(&y_map, stage, 0, 16 * warp, y, image);
            spio::arch::bulk_commit_group();
        }
#elif STORE_MODE == 2
        (void)stage;
#else
        __syncwarp();
        uint4* const out = reinterpret_cast<uint4*>(
            y_ptr + ((static_cast<size_t>(image) * IMG_H + y) * kWidth + 16 * warp) * 64);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int cell = lane + 32 * i;  // pixel cell / 8, 16-byte chunk cell % 8
            const int pixel = cell / 8;
            out[cell] = *reinterpret_cast<const uint4*>(stage + pixel * 128 +
                                                        (((cell % 8) ^ (pixel % 8)) << 4));
        }
#endif
    };

    // Output row d: its three input rows are walk rows d, d + 1, d + 2 (filter row r reads
    // walk row d + r, the filter flipped for upward walks).
    const auto step = [&](int d, float (&acc)[4][8], float (&prev)[4][8]) {
#if LOADER == 0
        for (int j = d == 0 ? 0 : d + 2; j <= d + 2; ++j) {
            spio::arch::mbarrier_wait_parity(&full[j % RING], (j / RING) & 1);
        }
#else
        // Rows up to d + 2 in, AHEAD - 3 later ones may still be on their way.
        copy_row(d + AHEAD);
        spio::arch::cp_async_wait_group<AHEAD - 2>();
        spio::arch::fence_proxy_async_shared();
        asm volatile("bar.sync 1, 128;\n" ::: "memory");
#endif
#if NO_MMA
#pragma unroll
        for (int p = 0; p < 4; ++p) {
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[p][e] = static_cast<float>(d);
        }
#else
        spio::arch::wgmma_fence();
#pragma unroll
        for (int r = 0; r < 3; ++r) {
            const int slot = (d + r) % RING;
#pragma unroll
            for (int s = 0; s < 3; ++s) {
#pragma unroll
                for (int p = 0; p < 4 / MMA_SHARE; ++p) {
                    wgmma_m64n16k16(acc[p], a_desc(slot, s, p), b_desc(3 * r + s, p), r + s > 0);
                }
            }
        }
        spio::arch::wgmma_commit_group();
        // Row d - 1's wgmmas are done: its first walk row is free, and it can be stored.
        spio::arch::wgmma_wait_group<1>();
#endif
        if (d >= 1) {
#if LOADER == 0
            const int released = d - 1;
            __syncwarp();
            if (lane == 0) spio::arch::mbarrier_arrive(&empty[released % RING]);
            if (thread == 0 && released + RING < walk_rows) {
                spio::arch::mbarrier_wait_parity(&empty[released % RING], (released / RING) & 1);
                load_row(released + RING);
            }
#endif
            store_row(d - 1, prev);
        }
    };

    float acc0[4][8];
    float acc1[4][8];
    // ptxas serializes every wgmma when a loop's back edge carries a group in flight whose
    // accumulators are read later, so each trip of 2 PAIRS rows ends with none in flight.
    static_assert(rows % (2 * PAIRS) == 0, "whole trips");
    for (int d0 = 0; d0 < rows; d0 += 2 * PAIRS) {
#pragma unroll
        for (int q = 0; q < PAIRS; ++q) {
            step(d0 + 2 * q, acc0, acc1);
            step(d0 + 2 * q + 1, acc1, acc0);
        }
#if !NO_MMA
        spio::arch::wgmma_wait_group<0>();
#endif
    }
#if !NO_MMA
    spio::arch::wgmma_wait_group<0>();
#endif
    store_row(rows - 1, acc1);
#if STORE_MODE == 0
    if (lane == 0) spio::arch::bulk_wait_group<0>();
#endif
}
