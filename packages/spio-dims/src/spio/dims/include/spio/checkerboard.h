// CheckerboardIndex: a shared-memory swizzle that keeps a two-column matrix of 16-byte cells
// free of bank conflicts when read along rows and along columns.
//
// Banks cells make one bank line (8 cells of 16 bytes fill the 32 four-byte banks). Stored
// plainly, cell (row, col) of a matrix with two columns sits at offset 2 * row + col, and the
// cells of one column in 8 consecutive rows fall on only Banks / 2 distinct bank positions:
// a two-way conflict. The checkerboard flips the column on every other bank line,
//
//     offset = 2 * row + (col ^ color),   color = (2 * row / Banks) % 2,
//
// so with Banks = 8, rows 0-3 put column 0 on even cells and rows 4-7 on odd cells:
//
//     row:      0  1  2  3 | 4  5  6  7 | 8 ...
//     col 0 ->  0  2  4  6 | 9 11 13 15 | 16 ...
//     col 1 ->  1  3  5  7 | 8 10 12 14 | 17 ...
//
// Any Banks consecutive rows of one column, and any Banks / 2 consecutive rows of both
// columns, then hit Banks distinct cell positions of a bank line.
//
//     using SmemChecker = spio::CheckerboardIndex<8, I, K8, CHECKERS>;
//     smem[SmemChecker(I(5), K8(1))]      // subscript: CHECKERS(10)
//     SmemChecker(CHECKERS(10)).row()     // I(5), and .col() == K8(1): the inverse map
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/dim.h"          // is_fold_v: the row, column and offset dimensions
#include "spio/coordinates.h"  // Coordinates: a checkerboard index as a subscript

namespace spio {

/// The checkerboard map (row, col in {0, 1}) -> Offset for bank lines of Banks cells.
template <int Banks, typename Row, typename Col, typename Offset>
class CheckerboardIndex {
    static_assert(Banks >= 2 && (Banks & (Banks - 1)) == 0,
                  "CheckerboardIndex<Banks, ...>: a bank line must hold a power of two of cells "
                  "(2, 4, 8, ...), as the banks do");
    static_assert(detail::is_fold_v<Row> && detail::is_fold_v<Col> && detail::is_fold_v<Offset>,
                  "CheckerboardIndex<Banks, Row, Col, Offset>: Row, Col and Offset must be "
                  "dimensions or folds");

public:
    using row_type = Row;
    using col_type = Col;
    using offset_type = Offset;
    static constexpr int banks = Banks;

    /// The cell of (row, col); col is 0 or 1.
    SPIO_HOST_DEVICE constexpr CheckerboardIndex(Row row, Col col)
        : _offset(row.get() * 2 + (col.get() ^ color(row.get()))) {}

    /// The cell at offset, for the inverse map row(), col().
    SPIO_HOST_DEVICE explicit constexpr CheckerboardIndex(Offset offset) : _offset(offset.get()) {}

    /// The cell's position.
    SPIO_HOST_DEVICE constexpr Offset offset() const { return Offset(_offset); }

    SPIO_HOST_DEVICE constexpr int get() const { return _offset; }

    /// The matrix row and column the cell holds.
    SPIO_HOST_DEVICE constexpr Row row() const { return Row(_offset / 2); }

    SPIO_HOST_DEVICE constexpr Col col() const { return Col((_offset % 2) ^ color(_offset / 2)); }

    /// The offset as coordinates, so that a checkerboard index subscripts a tensor.
    SPIO_HOST_DEVICE constexpr Coordinates<Offset> coordinates() const {
        return Coordinates<Offset>(offset());
    }

private:
    // Alternate bank lines flip the column.
    SPIO_HOST_DEVICE static constexpr int color(int row) { return row * 2 / Banks % 2; }

    int _offset;
};

}  // namespace spio
