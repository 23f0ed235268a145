// fprop's data movement without its arithmetic, for tools/fprop_copy_skeleton.py: block b owns
// a strip of kBq columns of a 64-channel image (128-byte pixels) and a chunk of kChunkRows
// rows, and walks the chunk's rows (and kHaloRows above and below, as a 3 x 3 filter's walk
// reads them) through a ring of kPrefetch + 2 shared-memory rows, as conv2d_gw8_fprop.cu does:
// 16-byte cp.async kPrefetch rows ahead, one block barrier a row. It writes each chunk row back
// out to the same place in dst, so dst ends up a copy of src and the bytes moved are those of
// a pass of fprop (input read, output written). Macros set each piece of the walk:
//
//   ALT      odd chunks walk their rows bottom to top (the rows two chunks share are then read
//            at the same end of both walks, the second time from L2);
//   SPIN     cycles each warp spins after each row's barrier (work on the walk's path);
//   STAGE    rows leave through two staging rows, one step late (fprop's output staging);
//   WEIGHTS  the block first copies 9 KB (fprop's weights of 8 groups, 3 x 3) from L2;
//   PERSIST  each block walks PERSIST chunks, grid-stride (blocks at work hold neighbours);
//   PC       copy_rows_pc instead: a fifth warp's first lane loads each row by bulk copy into
//            any free ring slot (full and empty mbarriers), and the four walking warps wait only
//            for their row, with no block barrier a row.
#include "spio/arch/async_copy.cuh"       // cp_async_cg_16, commit and wait groups
#include "spio/arch/grid_dependency.cuh"  // programmatic dependent launch, as fprop's
#include "spio/arch/mbarrier.cuh"         // the PC walk's full and empty barriers

#ifndef ALT
#define ALT 0
#endif
#ifndef SPIN
#define SPIN 0
#endif
#ifndef STAGE
#define STAGE 0
#endif
#ifndef WEIGHTS
#define WEIGHTS 0
#endif
#ifndef PERSIST
#define PERSIST 1
#endif

constexpr int kPix = 128;  // bytes of a pixel: 64 fp16 channels
constexpr int kImageRows = IMAGE_SIDE;
constexpr int kImageCols = IMAGE_SIDE;
constexpr int kBq = BLOCK_Q;
constexpr int kChunkRows = CHUNK_ROWS;
constexpr int kHaloRows = HALO_ROWS;  // rows read above and below the chunk
constexpr int kHaloCols = HALO_COLS;  // columns read left and right of the strip
constexpr int kPrefetch = PREFETCH;
constexpr int kStrips = kImageCols / kBq;
constexpr int kChunks = kImageRows / kChunkRows;
constexpr int kRing = kPrefetch + 2;
constexpr int kSlotBytes = (kBq + 2 * kHaloCols) * kPix;
constexpr int kRowBytes = kBq * kPix;
constexpr int kWalkers = WALKERS;           // threads that walk the rows
constexpr int kWeightBytes = WEIGHT_BYTES;  // fprop's weights of 8 groups, 3 x 3

static_assert(kImageCols % kBq == 0 && kImageRows % kChunkRows == 0,
              "strips and chunks tile the image");

// Where block b's walk reads and writes.
struct Walk {
    long long image;  // byte offset of the block's image
    int y0;           // first row of the walk (the top halo row)
    int x0;           // first column of the strip
    int xa, xb;       // columns read: the strip and its halo, inside the image
    bool up;          // ALT: an odd chunk, walked bottom to top

    __device__ Walk(int b) {
        const int n = b / (kStrips * kChunks);
        const int chunk = (b / kStrips) % kChunks;
        const int strip = b % kStrips;
        image = static_cast<long long>(n) * kImageRows * kImageCols * kPix;
        y0 = chunk * kChunkRows - kHaloRows;
        x0 = strip * kBq;
        xa = max(0, x0 - kHaloCols);
        xb = min(kImageCols, x0 + kBq + kHaloCols);
        up = ALT && chunk % 2 == 1;
    }

    __host__ __device__ static constexpr int rows() { return kChunkRows + 2 * kHaloRows; }

    // The image row that step j of the walk reads.
    __device__ int row(int j) const { return y0 + (up ? rows() - 1 - j : j); }

    // Whether step j's row is one of the chunk's (written out), not a halo row.
    __device__ static bool writes(int j) { return j >= kHaloRows && j < kHaloRows + kChunkRows; }

    __device__ const unsigned char* source(const unsigned char* src, int y) const {
        return src + image + (static_cast<long long>(y) * kImageCols + xa) * kPix;
    }

    __device__ unsigned char* destination(unsigned char* dst, int y) const {
        return dst + image + (static_cast<long long>(y) * kImageCols + x0) * kPix;
    }

    // Where the first column read lands in a ring slot (slot column 0 is the left halo).
    __device__ int slot_offset() const { return (xa - x0 + kHaloCols) * kPix; }
};

__device__ __forceinline__ void spin() {
    if (SPIN > 0) {
        const long long t0 = clock64();
        while (clock64() - t0 < SPIN) {
        }
    }
}

// Copy bytes (a multiple of 16) from shared or global memory with the threads below kThreads.
template <int kThreads>
__device__ __forceinline__ void copy_row(unsigned char* to, const unsigned char* from, int bytes) {
    for (int i = threadIdx.x; i < bytes / 16; i += kThreads) {
        *reinterpret_cast<uint4*>(to + 16 * i) = *reinterpret_cast<const uint4*>(from + 16 * i);
    }
}

extern "C" __global__ void __launch_bounds__(kWalkers)
    copy_rows(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src,
              const unsigned char* __restrict__ weights) {
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char* stage = smem + kRing * kSlotBytes;     // STAGE: two staging rows
    unsigned char* smem_weights = stage + 2 * kRowBytes;  // WEIGHTS
    // PERSIST: the block walks chunks b, b + grid, b + 2 grid, ... as one walk of kSteps steps,
    // so the blocks at work at any time hold neighbouring chunks.
    constexpr int kSteps = PERSIST * Walk::rows();
    const auto walk_at = [&](int s) { return Walk(blockIdx.x + (s / Walk::rows()) * gridDim.x); };

    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();
    if (WEIGHTS) {
        for (int i = threadIdx.x; i < kWeightBytes / 16; i += kWalkers) {
            spio::arch::cp_async_cg_16(smem_weights + 16 * i, weights + 16 * i);
        }
        spio::arch::cp_async_commit_group();
    }
    const auto load = [&](int s) {
        const Walk walk = walk_at(s);
        const int y = walk.row(s % Walk::rows());
        const bool inside = 0 <= y && y < kImageRows;
        unsigned char* slot = smem + (s % kRing) * kSlotBytes + walk.slot_offset();
        const unsigned char* from = walk.source(src, inside ? y : 0);
        for (int i = threadIdx.x; i < (walk.xb - walk.xa) * kPix / 16; i += kWalkers) {
            spio::arch::cp_async_cg_16(slot + 16 * i, from + 16 * i, inside ? 16 : 0);
        }
    };
    for (int s = 0; s < kPrefetch; ++s) {
        load(s);
        spio::arch::cp_async_commit_group();
    }
    unsigned char* staged = nullptr;  // STAGE: where staging row (step - 1) % 2 goes
    for (int s = 0; s < kSteps; ++s) {
        if (s + kPrefetch < kSteps) load(s + kPrefetch);
        spio::arch::cp_async_commit_group();
        spio::arch::cp_async_wait_group<kPrefetch>();
        __syncthreads();
        spin();
        const Walk walk = walk_at(s);
        const int j = s % Walk::rows();
        unsigned char* to = Walk::writes(j) ? walk.destination(dst, walk.row(j)) : nullptr;
        const unsigned char* row = smem + (s % kRing) * kSlotBytes + kHaloCols * kPix;
        if (STAGE) {
            if (staged != nullptr) {
                copy_row<kWalkers>(staged, stage + ((s + 1) % 2) * kRowBytes, kRowBytes);
            }
            staged = to;
            if (staged != nullptr) copy_row<kWalkers>(stage + (s % 2) * kRowBytes, row, kRowBytes);
        } else if (to != nullptr) {
            copy_row<kWalkers>(to, row, kRowBytes);
        }
    }
    if (STAGE && staged != nullptr) {
        __syncthreads();
        copy_row<kWalkers>(staged, stage + ((kSteps - 1) % 2) * kRowBytes, kRowBytes);
    }
    spio::arch::cp_async_wait_all();
}

// Load bytes from global to shared memory by bulk copy, completing on bar's transaction count.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
        "[%3];\n" ::"r"(spio::arch::shared_address(dst)),
        "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(spio::arch::shared_address(bar))
        : "memory");
}

extern "C" __global__ void __launch_bounds__(kWalkers + 32)
    copy_rows_pc(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src,
                 const unsigned char* __restrict__ weights) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ unsigned long long full[kRing], empty[kRing];
    constexpr int kWarps = kWalkers / 32;
    const Walk walk(blockIdx.x);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < kRing; ++s) {
            spio::arch::mbarrier_init(&full[s], 1);
            spio::arch::mbarrier_init(&empty[s], kWarps);
        }
        spio::arch::mbarrier_init_fence();
    }
    __syncthreads();
    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();
    if (warp == kWarps) {
        // The loading warp: its first lane fills each slot once the walkers have left it.
        if (lane == 0) {
            for (int j = 0; j < Walk::rows(); ++j) {
                const int s = j % kRing;
                if (j >= kRing) spio::arch::mbarrier_wait_parity(&empty[s], (j / kRing - 1) & 1);
                const int y = walk.row(j);
                if (0 <= y && y < kImageRows) {
                    const unsigned bytes = (walk.xb - walk.xa) * kPix;
                    spio::arch::mbarrier_arrive_expect_tx(&full[s], bytes);
                    bulk_load(smem + s * kSlotBytes + walk.slot_offset(), walk.source(src, y),
                              bytes, &full[s]);
                } else {
                    spio::arch::mbarrier_arrive(&full[s]);  // a padding row: nothing to load
                }
            }
        }
        return;
    }
    for (int j = 0; j < Walk::rows(); ++j) {
        const int s = j % kRing;
        spio::arch::mbarrier_wait_parity(&full[s], (j / kRing) & 1);
        spin();
        if (Walk::writes(j)) {
            // This warp's quarter of the row, 32 lanes a 16-byte cell.
            const unsigned char* row = smem + s * kSlotBytes + kHaloCols * kPix;
            unsigned char* to = walk.destination(dst, walk.row(j));
            constexpr int kCells = kRowBytes / 16 / kWarps;
            for (int i = lane; i < kCells; i += 32) {
                const int c = warp * kCells + i;
                *reinterpret_cast<uint4*>(to + 16 * c) =
                    *reinterpret_cast<const uint4*>(row + 16 * c);
            }
        }
        __syncwarp();
        if (lane == 0) spio::arch::mbarrier_arrive(&empty[s]);
    }
}
