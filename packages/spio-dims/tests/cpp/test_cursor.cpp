// Cursor (spio/cursor.h): element access, in-place steps, subscripts, hand-off to tensors.
#include <type_traits>  // std::is_same_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // A, AFolded, C, C_tile, ...

namespace {

using Grid = spio::Tensor<float, spio::DimInfo<I, 10, 10>, spio::DimInfo<J, 10, 1>>;

struct Pair {
    int first;
    int second;
};

using Pairs = spio::Tensor<Pair, spio::DimInfo<I, 4, 1>>;

}  // namespace

// A cursor of an unfolded tensor is a pointer and an offset; a folded base adds one int.
struct PointerAndOffset {
    float* pointer;
    int offset;
};

struct PointerOffsetAndCarry {
    int carried[1];
    float* pointer;
    int offset;
};

static_assert(sizeof(Grid::cursor_type) == sizeof(PointerAndOffset));
static_assert(sizeof(A::cursor_type) == sizeof(PointerAndOffset));
static_assert(sizeof(AFolded::cursor_type) == sizeof(PointerOffsetAndCarry));

UTEST(Cursor, GetDereferenceArrow) {
    float data[Grid::storage_size()];
    for (int n = 0; n < Grid::storage_size(); ++n) data[n] = static_cast<float>(n);
    const auto b = Grid(data)[I(2)][J(2)];
    EXPECT_EQ(b.get() - data, 2 * 10 + 2);
    EXPECT_EQ(*b, 22.0f);
    Pair pairs[4] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    const auto p = Pairs(pairs)[I(2)];
    EXPECT_EQ(p->first, 5);
    EXPECT_EQ(p->second, 6);
    p->second = 60;
    EXPECT_EQ(pairs[2].second, 60);
}

UTEST(Cursor, StepInPlace) {
    float data[Grid::storage_size()];
    auto b = Grid(data)[I(2)][J(2)];
    b.step(I(1));
    b.step(J(1));
    EXPECT_EQ(b.get() - data, 3 * 10 + 3);
    b.step(I(-3)).step(J(4));  // step returns the cursor
    EXPECT_EQ(b.get() - data, 7);
    b.step(spio::make_coordinates(I(1), K(9)));  // projection: K ignored
    EXPECT_EQ(b.get() - data, 17);
}

UTEST(Cursor, StepAnyFoldOfATensorBase) {
    float data[AFolded::storage_size()];
    auto a = AFolded(data)[I(1)];
    a.step(K(7));
    a.step(K(5));  // K(12): K8(1), K(4)
    EXPECT_EQ(a.get() - data, 32 + 8 + 4);
    a.step(K8(1));  // K(20): K8(2), K(4)
    EXPECT_EQ(a.get() - data, 64 + 8 + 4);
    a.step(K16(1));  // K(36): K8(4), K(4), one past the last K8
    EXPECT_EQ(a.get() - data, 128 + 8 + 4);
    a.step(K(-12));  // K(24)
    EXPECT_EQ(a.get() - data, 96 + 8);
}

UTEST(Cursor, SubscriptingACursorCopies) {
    float data[Grid::storage_size()];
    const auto base = Grid(data)[I(1)];
    const auto moved = base[J(5)];
    EXPECT_EQ(base.get() - data, 10);
    EXPECT_EQ(moved.get() - data, 15);
    EXPECT_TRUE(moved[spio::make_coordinates(I(1), J(1))].get() == data + 26);
    EXPECT_TRUE((std::is_same_v<decltype(moved), const Grid::cursor_type>));
    EXPECT_TRUE((std::is_same_v<Grid::cursor_type::tensor_type, Grid>));
}

UTEST(Cursor, AccumulationLoop) {
    float data[Grid::storage_size()];
    auto b = Grid(data)[I(2)][J(4)];
    for (int step = 0; step < 5; ++step) {
        EXPECT_TRUE(b.get() == data + (2 + step) * 10 + 4);
        b.step(I(1));
    }
}

UTEST(Cursor, HandOffToAnotherTensor) {
    float data[C::storage_size()];
    const auto c = C(data);
    const auto origin = spio::make_coordinates(I(4), J(16));
    const auto tile = C_tile(c[origin].get());
    for (auto idx : spio::range(tile)) {
        EXPECT_TRUE(tile[idx].get() == c[origin + idx].get());
    }
}

UTEST(Cursor, ConstexprPositions) {
    static constexpr float data[Grid::storage_size()] = {};
    using ConstGrid = spio::Tensor<const float, spio::DimInfo<I, 10, 10>, spio::DimInfo<J, 10, 1>>;
    constexpr auto cursor = ConstGrid(data)[I(3)][J(4)];
    static_assert(cursor.get() == data + 34);
    static_assert(ConstGrid(data)[J(4)][I(3)].get() == data + 34);
    EXPECT_TRUE(cursor.get() == data + 34);
}

// Regression (B2): a whole coarse unit moves the position at once and a negative finer
// subscript is carried on its own; the carried K(-1) must split as K8(-1), K(7), not as
// 2^32 - 1, so a[K8(1)][K(-1)] is a[K(7)].
using AFoldedByNonPowerOf2 = spio::Tensor<float, spio::DimInfo<spio::Fold<K, 6>, 4, 18>,
                                          spio::DimInfo<I, 3, 6>, spio::DimInfo<K, 6, 1>>;

static constexpr float folded_data[AFolded::storage_size()] = {};
using ConstAFolded = spio::Tensor<const float, spio::DimInfo<K8, 4, 32>, spio::DimInfo<I, 4, 8>,
                                  spio::DimInfo<K, 8, 1>>;
// Constant evaluation refuses signed overflow, which the unsigned digit split had here.
static_assert(ConstAFolded(folded_data)[K8(1)][K(-1)].get() ==
              ConstAFolded(folded_data)[K(7)].get());

UTEST(Cursor, FoldedNegativeCarriedSubscript) {
    float data[AFolded::storage_size()];
    const auto a = AFolded(data)[I(2)];
    EXPECT_EQ(a[K8(1)][K(-1)].get() - data, a[K(7)].get() - data);
    EXPECT_EQ(a[K8(3)][K(-9)].get() - data, a[K(15)].get() - data);
    EXPECT_EQ(a[K16(1)][K(-3)][K(-2)].get() - data, a[K(11)].get() - data);
    auto stepped = a;
    stepped.step(K8(2));
    stepped.step(K(-3));
    EXPECT_EQ(stepped.get() - data, a[K(13)].get() - data);

    using K6 = spio::Fold<K, 6>;
    float data6[AFoldedByNonPowerOf2::storage_size()];
    const auto a6 = AFoldedByNonPowerOf2(data6)[I(1)];
    EXPECT_EQ(a6[K6(1)][K(-1)].get() - data6, a6[K(5)].get() - data6);
    EXPECT_EQ(a6[K6(2)][K(-7)].get() - data6, a6[K(5)].get() - data6);
    EXPECT_EQ(a6[K6(2)][K(-6)].get() - data6, a6[K(6)].get() - data6);
}

UTEST(Cursor, FoldedNegativeLogicalCoordinateRoundsDown) {
    // K(-1) is K8(-1), K(7): the element 32 - 7 before K(0), where the layout extends to.
    float data[2 * AFolded::storage_size()];
    const auto a = AFolded(data + AFolded::storage_size());
    EXPECT_EQ(a[K(-1)].get() - a.get(), -32 + 7);
    EXPECT_EQ(a[K(-8)].get() - a.get(), -32);
    EXPECT_EQ(a[K(-9)].get() - a.get(), -64 + 7);
}

// Regression (P7): lesson 2 says cursors compare; they compare as their addresses do.
UTEST(Cursor, CursorsCompareByAddress) {
    float data[AFolded::storage_size()];
    const auto a = AFolded(data);
    EXPECT_TRUE(a[I(1)][K(2)] == a[K(2)][I(1)]);
    EXPECT_TRUE(a[K(7)][K(5)] == a[K8(1)][K(4)]);  // carried and moved at once: one element
    EXPECT_TRUE(a[I(1)] != a[I(2)]);
    EXPECT_FALSE(a[I(1)] != a[I(1)]);
    static_assert(ConstAFolded(folded_data)[K(12)] == ConstAFolded(folded_data)[K8(1)][K(4)]);
}
