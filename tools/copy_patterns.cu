// Copy kernels of different shapes, each copying `cells` 16-byte cells from src to dst, to
// find which pattern of loads and stores moves bytes at the rate torch's copy_ does
// (tools/copy_patterns.py times them). Macros:
//   UNROLL  16-byte cells a thread loads before it stores them (grid_stride, block_chunks)
//   CHUNK   bytes of one bulk copy (bulk); STAGES: bulk copies a block keeps in flight
//   CS      1: stores with the streaming hint .cs, loads with L1::no_allocate
#include "spio/arch/async_copy.cuh"
#include "spio/arch/mbarrier.cuh"
#include "spio/arch/tma.cuh"

#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef CHUNK
#define CHUNK 16384
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CS
#define CS 0
#endif

__device__ __forceinline__ uint4 load_cell(const uint4* p) {
#if CS
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
#else
    return __ldg(p);
#endif
}

__device__ __forceinline__ void store_cell(uint4* p, uint4 v) {
#if CS
    __stcs(p, v);
#else
    *p = v;
#endif
}

// Copy cells base, base + blockDim.x, ... (UNROLL of them, those below cells): all loads,
// then all stores.
__device__ __forceinline__ void copy_cells(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                           long long cells, long long base) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + u * blockDim.x;
        if (i < cells) v[u] = load_cell(src + i);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + u * blockDim.x;
        if (i < cells) store_cell(dst + i, v[u]);
    }
}

// Few blocks, each striding over the whole buffer UNROLL cells a thread at a time.
extern "C" __global__ void grid_stride(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                       long long cells) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x * UNROLL;
    for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;
         base < cells; base += stride) {
        copy_cells(dst, src, cells, base);
    }
}

// Copy chunk `chunk` of blockDim.x * UNROLL cells, every thread UNROLL of them.
__device__ __forceinline__ void copy_chunk(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                           long long cells, long long chunk) {
    copy_cells(dst, src, cells, chunk * blockDim.x * UNROLL + threadIdx.x);
}

// One block for each chunk, as an elementwise kernel lays its work out: many short blocks that
// the hardware hands to SMs as others finish. Block b copies chunk b * spread mod blocks
// (spread coprime to the blocks): 1 in order; a large one puts the chunks of blocks placed
// together far apart.
extern "C" __global__ void block_chunks(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                        long long cells, long long spread) {
    copy_chunk(dst, src, cells, blockIdx.x * spread % gridDim.x);
}

// Few blocks, each copying its own contiguous region chunk by chunk, as a walk streams its
// image: at any moment the blocks' chunks lie far apart.
extern "C" __global__ void own_region(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                      long long cells) {
    const long long chunks = (cells + blockDim.x * UNROLL - 1) / (blockDim.x * UNROLL);
    const long long first = chunks * blockIdx.x / gridDim.x;
    const long long end = chunks * (blockIdx.x + 1) / gridDim.x;
    for (long long chunk = first; chunk < end; ++chunk) copy_chunk(dst, src, cells, chunk);
}

// Few blocks claiming chunks in order from a counter, so the chunks in flight lie together and
// faster blocks take more of them. The counter is never reset: a launch hands out chunks + grid
// tickets (each block's last claim finds none left), so ticket t is chunk t mod (chunks + grid)
// of its launch, launches being in stream order.
extern "C" __global__ void claimed(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                   long long cells, unsigned long long* tickets) {
    __shared__ long long chunk;
    const long long chunks = (cells + blockDim.x * UNROLL - 1) / (blockDim.x * UNROLL);
    while (true) {
        if (threadIdx.x == 0) {
            chunk = static_cast<long long>(atomicAdd(tickets, 1ull) % (chunks + gridDim.x));
        }
        __syncthreads();
        const long long mine = chunk;
        __syncthreads();
        if (mine >= chunks) return;
        copy_chunk(dst, src, cells, mine);
    }
}

// One thread of each block moves CHUNK-byte pieces (piece k of the block: blockIdx.x + k *
// gridDim.x) with 1-D bulk copies through STAGES shared-memory buffers: a piece is loaded
// into its buffer (completing on the buffer's mbarrier) and stored from it; a buffer is loaded
// again once its store has read it.
extern "C" __global__ void bulk(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                long long cells) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ unsigned long long full[STAGES];
    if (threadIdx.x != 0) return;
    const long long pieces = cells * 16 / CHUNK;  // the host sizes the buffer in whole pieces
    const long long mine = (pieces - blockIdx.x + gridDim.x - 1) / gridDim.x;
    for (int s = 0; s < STAGES; ++s) spio::arch::mbarrier_init(&full[s], 1);
    spio::arch::mbarrier_init_fence();
    const auto load = [&](long long k) {
        const int s = static_cast<int>(k % STAGES);
        const long long piece = blockIdx.x + k * gridDim.x;
        spio::arch::mbarrier_arrive_expect_tx(&full[s], CHUNK);
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
            "[%3];\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(smem + s * CHUNK))),
            "l"(reinterpret_cast<const unsigned char*>(src) + piece * CHUNK), "n"(CHUNK),
            "r"(static_cast<unsigned>(__cvta_generic_to_shared(&full[s])))
            : "memory");
    };
    for (long long k = 0; k < STAGES - 1 && k < mine; ++k) load(k);
    for (long long k = 0; k < mine; ++k) {
        const int s = static_cast<int>(k % STAGES);
        spio::arch::mbarrier_wait_parity(&full[s], static_cast<unsigned>((k / STAGES) & 1));
        const long long piece = blockIdx.x + k * gridDim.x;
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
                         reinterpret_cast<unsigned char*>(dst) + piece * CHUNK),
                     "r"(static_cast<unsigned>(__cvta_generic_to_shared(smem + s * CHUNK))),
                     "n"(CHUNK)
                     : "memory");
        spio::arch::bulk_commit_group();
        // The next load goes into the buffer the previous piece was stored from: wait until
        // that store has read it (this piece's store may still be reading its own).
        if (k + STAGES - 1 < mine) {
            spio::arch::bulk_wait_group_read<1>();
            load(k + STAGES - 1);
        }
    }
    spio::arch::bulk_wait_group<0>();
}

// fprop's walk without its halo or arithmetic: block (n, chunk, strip) copies rows
// [chunk * CHUNK_ROWS, + CHUNK_ROWS) of image n's 64 rows of 8 KB (64 pixels of 128 bytes), the
// 4 KB of its 32-column strip of each, with 16-byte cp.async through a shared-memory ring.
// Rows are loaded BURST at a time, AHEAD bursts ahead of the one being stored. Each thread
// stores the cells it loaded, so no barrier is needed.
#ifndef BURST
#define BURST 1
#endif
#ifndef AHEAD
#define AHEAD 2
#endif
#ifndef CHUNK_ROWS
#define CHUNK_ROWS 16
#endif
constexpr int kRowCells = 512;    // 8 KB
constexpr int kStripCells = 256;  // 4 KB
constexpr int kImageRows = 64;
constexpr int kWalkThreads = 128;

extern "C" __global__ void __launch_bounds__(kWalkThreads)
    walk(uint4* __restrict__ dst, const uint4* __restrict__ src, long long cells) {
    extern __shared__ __align__(16) uint4 ring[];
    constexpr int kChunks = kImageRows / CHUNK_ROWS;
    constexpr int kBursts = CHUNK_ROWS / BURST;
    const int strip = blockIdx.x % 2;
    const int chunk = (blockIdx.x / 2) % kChunks;
    const long long image = blockIdx.x / (2 * kChunks);
    const long long first =
        (image * kImageRows + chunk * CHUNK_ROWS) * kRowCells + strip * kStripCells;
    const auto load_burst = [&](int k) {
#pragma unroll
        for (int r = 0; r < BURST; ++r) {
            const long long row = first + static_cast<long long>(k * BURST + r) * kRowCells;
            uint4* slot = ring + ((k % (AHEAD + 1)) * BURST + r) * kStripCells;
#pragma unroll
            for (int i = threadIdx.x; i < kStripCells; i += kWalkThreads) {
                spio::arch::cp_async_cg_16(slot + i, src + row + i, 16);
            }
        }
        spio::arch::cp_async_commit_group();
    };
    for (int k = 0; k < AHEAD; ++k) load_burst(k);
    for (int k = 0; k < kBursts; ++k) {
        if (k + AHEAD < kBursts) {
            load_burst(k + AHEAD);
        } else {
            spio::arch::cp_async_commit_group();
        }
        spio::arch::cp_async_wait_group<AHEAD>();
#pragma unroll
        for (int r = 0; r < BURST; ++r) {
            const long long row = first + static_cast<long long>(k * BURST + r) * kRowCells;
            const uint4* slot = ring + ((k % (AHEAD + 1)) * BURST + r) * kStripCells;
#pragma unroll
            for (int i = threadIdx.x; i < kStripCells; i += kWalkThreads) dst[row + i] = slot[i];
        }
    }
}
