// The shared-memory layout of the conv kernels' rings of rows (pixel-major, groups swizzled),
// the loop that spreads a row's cells over a block's threads, and the per-thread copy of a
// row into the ring.
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
//     slot(x, g) = g ^ ((x * kSwizzle / 8) % kSwizzle)
//
// where kSwizzle is kGroups up to 8 groups (ring_swizzle). e.g. kGroups = 8: slot = g ^ (x %
// 8); kGroups = 2: the groups swap every 4 pixels. 8 consecutive pixels of a group then cover
// the 8 bank positions of a 128-byte line. The swizzle permutes cells within a pixel only,
// which keeps the copies coalesced.
#pragma once

namespace conv2d_gw8 {

/// The cells a pixel's groups are swizzled among: kGroups up to 8 groups, else the largest
/// power of two up to 8 that divides kGroups. A pixel of 12 groups (a 1 x 1 layer's whole
/// 192-byte pixel) starts at cell 12 x, 4 x modulo 8, as a pixel of 4 groups does; XOR on the
/// low two bits of g keeps each group within its aligned four and covers the 8 bank positions
/// as at 4 groups.
__host__ __device__ constexpr int ring_swizzle(int groups) {
    return groups % 8 == 0 ? 8 : groups % 4 == 0 ? 4 : groups % 2 == 0 ? 2 : 1;
}

/// The swizzled slot of group g of pixel x in a ring row of kGroups cells per pixel.
template <int kGroups>
__device__ __forceinline__ int ring_slot(int x, int g) {
    constexpr int kSwizzle = ring_swizzle(kGroups);
    return g ^ ((x * kSwizzle / 8) % kSwizzle);
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

/// One 16-byte cell a thread copies into every ring row: its source in row 0 of the global
/// tensor, its destination in ring row 0, and whether its column (and image) is inside the
/// tensor. The row a copy reads and the ring row it fills are subscripts of these.
template <typename Src, typename Dst>
struct RowCell {
    Src src;
    Dst dst;
    bool inside;
};

template <typename Src, typename Dst>
__device__ __forceinline__ RowCell<Src, Dst> row_cell(const Src& src, const Dst& dst, bool inside) {
    return {src, dst, inside};
}

/// The cells i = thread, thread + kThreads, ... below kCells of a ring row, located once.
///
/// Everything about a cell but its row (column, group, swizzled slot, whether the column is
/// inside the image) is the same for every row of the walk; computing it per row cost ~25
/// instructions per 16-byte copy (fprop's default tile: 216 instructions per row before,
/// 183 after). A copy now costs an offset, a select and the cp.async.
template <int kCells, int kThreads, typename Cell>
struct RowCells {
    static constexpr int kPerThread = (kCells + kThreads - 1) / kThreads;
    Cell cells[kPerThread];
    bool valid[kPerThread];  // below kCells (only the last may fall short)

    /// Copy row `row` (a subscript of the source, e.g. Y(y)) into ring row `ring` (a
    /// subscript of the destination), zeros where the cell or the row is outside the tensor.
    /// `fallback` is a valid global address for the copies that read nothing.
    template <typename RowSub, typename RingSub, typename T>
    __device__ __forceinline__ void copy(RowSub row, RingSub ring, bool row_inside,
                                         const T* fallback) const {
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
            if (!valid[k]) continue;
            const bool inside = row_inside && cells[k].inside;
            const T* src = inside ? cells[k].src[row].get() : fallback;
            spio::arch::cp_async_cg_16(cells[k].dst[ring].get(), src, inside ? 16 : 0);
        }
    }
};

/// Locate this thread's cells of a ring row of kCells: locate(i) returns the RowCell of cell
/// i (see row_cell).
template <int kCells, int kThreads, typename Locate>
__device__ __forceinline__ auto locate_row_cells(int thread, Locate&& locate) {
    RowCells<kCells, kThreads, decltype(locate(0))> row;
#pragma unroll
    for (int k = 0; k < row.kPerThread; ++k) {
        const int i = thread + k * kThreads;
        row.valid[k] = kCells % kThreads == 0 || i < kCells;
        row.cells[k] = locate(row.valid[k] ? i : 0);
    }
    return row;
}

}  // namespace conv2d_gw8
