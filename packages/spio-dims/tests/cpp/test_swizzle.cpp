// SwizzleIndex (spio/swizzle.h): the TMA swizzle is a bijection, conflict-free, periodic, and
// the checkerboard when rows are two cells wide.
#include <set>          // distinct offsets and bank positions
#include <type_traits>  // std::is_same_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // SmemSwizzle, SmemSwizzled, SmemChecker, I, K8, SWIZZLE, PING

namespace {

template <int Cells>
using Swizzled = spio::SwizzleIndex<Cells, I, K8, SWIZZLE>;

// Cells of 16 bytes in one 128-byte bank line.
constexpr int kLineCells = 8;

// Whether the first `rows` rows of Cells cells map one-to-one onto offsets 0 ... rows * Cells
// - 1, and the inverse map gives every cell's row and column back.
template <int Cells>
bool bijective(int rows) {
    std::set<int> offsets;
    bool inverse = true;
    for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < Cells; ++col) {
            const auto cell = Swizzled<Cells>(I(row), K8(col));
            offsets.insert(cell.get());
            const auto back = Swizzled<Cells>(cell.offset());
            inverse = inverse && back.row() == I(row) && back.col() == K8(col);
        }
    }
    return inverse && static_cast<int>(offsets.size()) == rows * Cells && *offsets.begin() == 0 &&
           *offsets.rbegin() == rows * Cells - 1;
}

// Whether the cells of rows first ... first + rows - 1 in columns col_begin ... col_end - 1
// occupy `rows * columns` distinct positions of a bank line.
template <int Cells>
bool conflict_free(int first, int rows, int col_begin, int col_end) {
    std::set<int> positions;
    for (int row = first; row < first + rows; ++row) {
        for (int col = col_begin; col < col_end; ++col) {
            positions.insert(Swizzled<Cells>(I(row), K8(col)).get() % kLineCells);
        }
    }
    return static_cast<int>(positions.size()) == rows * (col_end - col_begin);
}

// Whether, from every start row, 8 rows of each column and the 8 / Cells rows of a bank line
// across all columns are conflict-free.
template <int Cells>
bool conflict_free_everywhere() {
    bool ok = true;
    for (int first = 0; first < 32; ++first) {
        for (int col = 0; col < Cells; ++col) {
            ok = ok && conflict_free<Cells>(first, kLineCells, col, col + 1);
        }
        ok = ok && conflict_free<Cells>(first, kLineCells / Cells, 0, Cells);
    }
    return ok;
}

// Whether the pattern repeats every period_rows rows, shifted by one period of cells.
template <int Cells>
bool periodic() {
    constexpr int period = Swizzled<Cells>::period_rows;
    bool ok = true;
    for (int row = 0; row < 64; ++row) {
        for (int col = 0; col < Cells; ++col) {
            ok = ok && Swizzled<Cells>(I(row + period), K8(col)).get() ==
                           Swizzled<Cells>(I(row), K8(col)).get() + period * Cells;
        }
    }
    return ok;
}

}  // namespace

static_assert(SmemSwizzle(I(5), K8(1)).get() == 44);
static_assert(SmemSwizzle(SWIZZLE(44)).col() == K8(1) && SmemSwizzle(SWIZZLE(44)).row() == I(5));
static_assert(Swizzled<2>::period_rows == 8 && Swizzled<4>::cells == 4);
static_assert(std::is_same_v<SmemSwizzle::offset_type, SWIZZLE>);

UTEST(Swizzle, TheDocumentedTable) {
    const int col0[] = {0, 9, 18, 27, 36, 45, 54, 63, 64};
    const int col1[] = {1, 8, 19, 26, 37, 44, 55, 62, 65};
    for (int row = 0; row < 9; ++row) {
        EXPECT_EQ(SmemSwizzle(I(row), K8(0)).get(), col0[row]);
        EXPECT_EQ(SmemSwizzle(I(row), K8(1)).get(), col1[row]);
    }
    EXPECT_TRUE(SmemSwizzle(I(5), K8(1)).offset() == SWIZZLE(44));
}

UTEST(Swizzle, Bijection) {
    EXPECT_TRUE(bijective<2>(64));
    EXPECT_TRUE(bijective<4>(64));
    EXPECT_TRUE(bijective<8>(64));
}

UTEST(Swizzle, ColumnAndBankLineReadsAreConflictFree) {
    EXPECT_TRUE(conflict_free_everywhere<2>());
    EXPECT_TRUE(conflict_free_everywhere<4>());
    EXPECT_TRUE(conflict_free_everywhere<8>());
}

UTEST(Swizzle, PlainLayoutWouldConflict) {
    // The reason for the swizzle: 8 rows of one column, stored plainly, share 8 / Cells
    // positions of a bank line.
    for (int cells = 2; cells <= 8; cells *= 2) {
        std::set<int> positions;
        for (int row = 0; row < 8; ++row) positions.insert((cells * row) % kLineCells);
        EXPECT_EQ(static_cast<int>(positions.size()), kLineCells / cells);
    }
}

UTEST(Swizzle, RepeatsEveryEightRows) {
    EXPECT_TRUE(periodic<2>());
    EXPECT_TRUE(periodic<4>());
    EXPECT_TRUE(periodic<8>());
}

UTEST(Swizzle, TwoCellsIsTheCheckerboard) {
    for (int row = 0; row < 64; ++row) {
        for (int col = 0; col < 2; ++col) {
            EXPECT_EQ(Swizzled<2>(I(row), K8(col)).get(), SmemChecker(I(row), K8(col)).get());
        }
    }
}

UTEST(Swizzle, CoordinatesAndSubscript) {
    const auto cell = SmemSwizzle(I(6), K8(1));
    EXPECT_TRUE(cell.coordinates() == spio::make_coordinates(SWIZZLE(55)));
    uint4 data[SmemSwizzled::storage_size()];
    EXPECT_TRUE(SmemSwizzled(data)[cell][PING(1)].get() == data + 64 + 55);
}
