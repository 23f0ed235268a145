// CheckerboardIndex (spio/checkerboard.h): the swizzle is a bijection and conflict-free.
#include <set>  // distinct bank positions

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // SmemChecker, I, K8, CHECKERS

namespace {

template <int Banks>
using Checker = spio::CheckerboardIndex<Banks, I, K8, CHECKERS>;

// Whether the cells of rows first ... first + rows - 1 in the given columns occupy `rows *
// columns` distinct positions of a bank line.
template <int Banks>
bool conflict_free(int first, int rows, int col_begin, int col_end) {
    std::set<int> positions;
    for (int row = first; row < first + rows; ++row) {
        for (int col = col_begin; col < col_end; ++col) {
            positions.insert(Checker<Banks>(I(row), K8(col)).get() % Banks);
        }
    }
    return static_cast<int>(positions.size()) == rows * (col_end - col_begin);
}

}  // namespace

static_assert(SmemChecker(I(0), K8(0)).get() == 0);
static_assert(SmemChecker(I(4), K8(0)).get() == 9);

UTEST(Checkerboard, TheDocumentedTable) {
    const int col0[] = {0, 2, 4, 6, 9, 11, 13, 15, 16};
    const int col1[] = {1, 3, 5, 7, 8, 10, 12, 14, 17};
    for (int row = 0; row < 9; ++row) {
        EXPECT_EQ(SmemChecker(I(row), K8(0)).get(), col0[row]);
        EXPECT_EQ(SmemChecker(I(row), K8(1)).get(), col1[row]);
    }
    EXPECT_TRUE(SmemChecker(I(5), K8(1)).offset() == CHECKERS(10));
}

UTEST(Checkerboard, Bijection) {
    std::set<int> offsets;
    for (int row = 0; row < 64; ++row) {
        for (int col = 0; col < 2; ++col) {
            const auto cell = SmemChecker(I(row), K8(col));
            offsets.insert(cell.get());
            const auto back = SmemChecker(cell.offset());
            EXPECT_TRUE(back.row() == I(row));
            EXPECT_TRUE(back.col() == K8(col));
        }
    }
    EXPECT_EQ(static_cast<int>(offsets.size()), 128);
    EXPECT_EQ(*offsets.rbegin(), 127);
}

UTEST(Checkerboard, ColumnReadsAreConflictFree) {
    for (int first = 0; first < 32; ++first) {
        EXPECT_TRUE(conflict_free<8>(first, 8, 0, 1));
        EXPECT_TRUE(conflict_free<8>(first, 8, 1, 2));
        EXPECT_TRUE(conflict_free<4>(first, 4, 0, 1));
        EXPECT_TRUE(conflict_free<16>(first, 16, 1, 2));
    }
}

UTEST(Checkerboard, RowReadsAreConflictFree) {
    for (int first = 0; first < 32; ++first) {
        EXPECT_TRUE(conflict_free<8>(first, 4, 0, 2));
        EXPECT_TRUE(conflict_free<16>(first, 8, 0, 2));
    }
}

UTEST(Checkerboard, PlainLayoutWouldConflict) {
    // The reason for the swizzle: 8 rows of one column, stored plainly, share 4 positions.
    std::set<int> positions;
    for (int row = 0; row < 8; ++row) positions.insert((2 * row) % 8);
    EXPECT_EQ(static_cast<int>(positions.size()), 4);
}

UTEST(Checkerboard, CoordinatesAndSubscript) {
    const auto cell = SmemChecker(I(6), K8(1));
    EXPECT_TRUE(cell.coordinates() == spio::make_coordinates(CHECKERS(12)));
    uint4 data[SmemA::storage_size()];
    EXPECT_TRUE(SmemA(data)[cell][PING(1)].get() == data + 128 + 12);
}
