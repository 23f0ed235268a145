// SwizzleIndex: the XOR swizzle of rows of 2, 4 or 8 16-byte cells in shared memory, the one
// Hopper's TMA writes with CU_TENSOR_MAP_SWIZZLE_32B, _64B and _128B.
//
// A shared-memory bank line is 128 bytes: 8 cells of 16 bytes. Stored plainly, a matrix whose
// rows are Cells cells wide puts cell (row, col) at offset Cells * row + col, and the same
// column of 8 consecutive rows falls on only 8 / Cells distinct cell positions of a bank line:
// ldmatrix reading one column (8 rows of 16 bytes) then conflicts Cells ways. The swizzle XORs the
// column with the row's bank line, modulo the cells of a row:
//
//     offset = Cells * row + (col ^ line % Cells),   line = row / (8 / Cells)
//
// so that any 8 consecutive rows of one column hit 8 distinct cell positions of a bank line,
// as do the 8 / Cells rows of one bank line across all columns. With Cells = 8 (128-byte rows)
// column c of row r sits at position c ^ r % 8:
//
//     row:      0  1  2  3  4  5  6  7 | 8 ...
//     col 0 ->  0  9 18 27 36 45 54 63 | 64 ...
//     col 1 ->  1  8 19 26 37 44 55 62 | 65 ...
//
// The pattern repeats every 8 * Cells cells (1024 bytes for Cells = 8): a tensor that steps
// whole periods (16-row fragments, say) keeps plain strides between them, and TMA's swizzled
// tiles match it when the tile starts at a multiple of the period. Cells = 2 is the
// checkerboard (spio/checkerboard.h) with 8 banks.
//
// Rows are Row units, columns Col units (0 ... Cells - 1), offsets Offset units:
//
//     using SmemSwizzle = spio::SwizzleIndex<8, I, K8, SWIZZLE>;
//     smem[SmemSwizzle(I(5), K8(1))]       // subscript: SWIZZLE(44)
//     SmemSwizzle(SWIZZLE(44)).row()       // I(5), and .col() == K8(1): the inverse map
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/dim.h"          // is_fold_v: the row, column and offset dimensions
#include "spio/coordinates.h"  // Coordinates: a swizzle index as a subscript

namespace spio {

/// The swizzle (row, col in 0 ... Cells - 1) -> Offset for rows of Cells 16-byte cells.
template <int Cells, typename Row, typename Col, typename Offset>
class SwizzleIndex {
    static_assert(Cells == 2 || Cells == 4 || Cells == 8,
                  "SwizzleIndex<Cells, ...>: rows must be 2, 4 or 8 cells of 16 bytes (32-, 64- "
                  "or 128-byte swizzle)");
    static_assert(detail::is_fold_v<Row> && detail::is_fold_v<Col> && detail::is_fold_v<Offset>,
                  "SwizzleIndex<Cells, Row, Col, Offset>: Row, Col and Offset must be dimensions "
                  "or folds");

public:
    using row_type = Row;
    using col_type = Col;
    using offset_type = Offset;
    static constexpr int cells = Cells;
    /// Rows after which the pattern repeats: Cells bank lines of 8 / Cells rows each.
    static constexpr int period_rows = 8;

    /// The cell of (row, col); 0 <= col < Cells.
    SPIO_HOST_DEVICE constexpr SwizzleIndex(Row row, Col col)
        : _offset(row.get() * Cells + (col.get() ^ mask(row.get()))) {}

    /// The cell at offset, for the inverse map row(), col().
    SPIO_HOST_DEVICE explicit constexpr SwizzleIndex(Offset offset) : _offset(offset.get()) {}

    /// The cell's position.
    SPIO_HOST_DEVICE constexpr Offset offset() const { return Offset(_offset); }

    SPIO_HOST_DEVICE constexpr int get() const { return _offset; }

    /// The matrix row and column the cell holds.
    SPIO_HOST_DEVICE constexpr Row row() const { return Row(_offset / Cells); }

    SPIO_HOST_DEVICE constexpr Col col() const {
        return Col((_offset % Cells) ^ mask(_offset / Cells));
    }

    /// The offset as coordinates, so that a swizzle index subscripts a tensor.
    SPIO_HOST_DEVICE constexpr Coordinates<Offset> coordinates() const {
        return Coordinates<Offset>(offset());
    }

private:
    // The row's bank line (8 / Cells rows share one), modulo the cells of a row.
    SPIO_HOST_DEVICE static constexpr int mask(int row) { return row / (8 / Cells) % Cells; }

    int _offset;
};

}  // namespace spio
