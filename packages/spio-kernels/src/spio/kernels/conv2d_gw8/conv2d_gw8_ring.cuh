// The shared-memory layout of the conv kernels' rings of rows (pixel-major, groups swizzled)
// and the loop that spreads a row's cells over a block's threads.
//
// A ring row holds, for each pixel x, the block's kGroups 16-byte cells (one per group) side by
// side, as they sit in global memory. The cp.async of a warp walk the groups, then the pixels,
// so their destinations keep the global order and the copies coalesce into whole-line L2
// requests. (A group-major row scatters them: each 16-byte copy then becomes an L2 request of
// its own, and L2 tag lookups, not DRAM, limit the kernel.)
//
// ldmatrix reads one group of 8 consecutive pixels per phase. Stored plainly those cells are
// kGroups cells apart and share bank positions when kGroups > 1, so each pixel's groups are
// XOR-swizzled:
//
//     slot(x, g) = g ^ ((x * kGroups / 8) % kGroups)
//
// e.g. kGroups = 8: slot = g ^ (x % 8); kGroups = 2: the groups swap every 4 pixels. 8
// consecutive pixels of a group then cover the 8 bank positions of a 128-byte line. The
// swizzle permutes cells within a pixel only, which keeps the copies coalesced.
#pragma once

namespace conv2d_gw8 {

/// The swizzled slot of group g of pixel x in a ring row of kGroups cells per pixel.
template <int kGroups>
__device__ __forceinline__ int ring_slot(int x, int g) {
    static_assert(kGroups == 1 || kGroups == 2 || kGroups == 4 || kGroups == 8,
                  "ring_slot: 1, 2, 4 or 8 groups per pixel");
    return g ^ ((x * kGroups / 8) % kGroups);
}

/// The cell of pixel x, group g (both within the block) of a ring row (a cursor of a tensor
/// with dims X and SLOT, kGroups slots per pixel).
template <int kGroups, typename Row>
__device__ __forceinline__ auto ring_cell(const Row& row, X x, G g) {
    return row[x][SLOT(ring_slot<kGroups>(x.get(), g.get()))];
}

/// Call f(i) for the cells i = thread, thread + kThreads, ... below kCells.
///
/// The trip count is a compile-time constant, so the loop unrolls into straight-line code and
/// whatever f derives from i alone (a cell's column, group and addresses) is computed once,
/// outside the row loop around it. (A loop `for (i = thread; i < kCells; i += kThreads)` has a
/// trip count that depends on the thread: it stays a loop, and recomputes all of that for
/// every row.)
template <int kCells, int kThreads, typename F>
__device__ __forceinline__ void for_each_cell(int thread, F&& f) {
#pragma unroll
    for (int k = 0; k < (kCells + kThreads - 1) / kThreads; ++k) {
        const int i = thread + k * kThreads;
        if (kCells % kThreads == 0 || i < kCells) f(i);
    }
}

}  // namespace conv2d_gw8
