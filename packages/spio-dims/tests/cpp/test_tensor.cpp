// Tensor (spio/tensor.h): sizes, extents, storage, subscripting, strides, element types.
#include <type_traits>  // std::is_same_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // A, B, C_tile, AFolded, AGlobal, SmemA, ...

static_assert(A::storage_size() == 16 * 32);
static_assert(C_tile::storage_size() == 1 + 7 * 64 + 31);
static_assert(AFolded::size<K>() == K(32));
static_assert(A::size() == 16 * 32);

UTEST(Tensor, DataTypeAndStorageSize) {
    EXPECT_TRUE((std::is_same_v<A::data_type, float>));
    EXPECT_TRUE((std::is_same_v<AGlobal::data_type, const uint4>));
    EXPECT_EQ(A::storage_size(), 512);
    EXPECT_EQ(B::storage_size(), 32 * 64);
    EXPECT_EQ(C_tile::storage_size(), 1 + 7 * 64 + 31 * 1);
    EXPECT_EQ(AFolded::storage_size(), 128);
    EXPECT_EQ(AGlobal::storage_size(), 1 + 3 * 128 + 63 * 2 + 1);
    EXPECT_EQ(C_tile::size(), 8 * 32);
}

UTEST(Tensor, SizeOfListedAndFoldedDimensions) {
    EXPECT_TRUE(A::size<I>() == I(16));
    EXPECT_TRUE(A::size<K>() == K(32));
    EXPECT_TRUE((std::is_same_v<decltype(A::size<I>()), I>));
    // A base that appears folded: its logical extent in base units.
    EXPECT_TRUE(AFolded::size<K>() == K(32));
    EXPECT_EQ(AFolded::size<K>().get(), 32);
    EXPECT_TRUE(AFolded::size<K8>() == K8(4));
    EXPECT_EQ(AFolded::size<K8>().get(), 4);
    EXPECT_EQ(AFolded::size<K16>().get(), 2);  // another fold: the extent in its units
    EXPECT_EQ(AGlobal::size<K>().get(), 64);
    EXPECT_EQ(AGlobal::size<K8>().get(), 2);  // listed: its own size
    EXPECT_EQ(SmemA::size<I>().get(), 32);
    EXPECT_EQ(SmemA::size<I16>().get(), 2);
    EXPECT_EQ(A::size<I16>().get(), 1);
}

UTEST(Tensor, ExtentsHaveOneEntryPerBase) {
    const auto e = AFolded::extents();
    EXPECT_TRUE((std::is_same_v<decltype(e), const spio::Coordinates<K, I>>));
    EXPECT_TRUE(e.get<K>() == K(32));
    EXPECT_TRUE(e.get<I>() == I(4));
    const auto a = A::extents();
    EXPECT_TRUE((std::is_same_v<decltype(a), const spio::Coordinates<I, K>>));
    EXPECT_TRUE(a == spio::make_coordinates(I(16), K(32)));
}

UTEST(Tensor, PositionFreeSubscripts) {
    float data[A::storage_size()];
    const auto a = A(data);
    EXPECT_TRUE(a.get() == data);
    EXPECT_TRUE(a[I(2)][K(4)].get() == data + 2 * 32 + 4);
    EXPECT_TRUE(a[K(4)][I(2)].get() == a[I(2)][K(4)].get());
    EXPECT_TRUE(a[I16(1)].get() == data + 16 * 32);  // a coarser fold of an unfolded base
    EXPECT_TRUE(a[I(1)][I(1)].get() == a[I(2)].get());
    EXPECT_TRUE(a[K(-1)][I(1)].get() == data + 31);  // plain index arithmetic: may go negative
}

UTEST(Tensor, ProjectionIgnoresDimensionsTheTensorLacks) {
    float data[B::storage_size()];
    const auto b = B(data);
    const auto coords = spio::make_coordinates(I(2), J(3), K(4));
    EXPECT_TRUE(b[coords].get() == b[J(3)][K(4)].get());
}

UTEST(Tensor, SubscriptsAccumulateBeforeFolding) {
    float data[AFolded::storage_size()];
    for (int n = 0; n < AFolded::storage_size(); ++n) data[n] = static_cast<float>(n);
    const auto a = AFolded(data);
    const auto i = I(2);
    for (int k = 0; k < 32; ++k) {
        const auto expected = data + (k / 8) * 32 + 2 * 8 + k % 8;
        EXPECT_TRUE(a[i][K(k)].get() == expected);
        EXPECT_TRUE(a[K(k)][i].get() == expected);
        EXPECT_TRUE(a[i][K8(k / 8)][K(k % 8)].get() == expected);
    }
    EXPECT_TRUE(a[i][K(4)][K(4)].get() == a[i][K8(1)].get());
    EXPECT_TRUE(a[i][K(7)][K(5)].get() == a[i][K8(1)][K(4)].get());
    EXPECT_TRUE(*a[i][K(7)][K(5)] == *a[i][K8(1)][K(4)]);
    EXPECT_TRUE(a[K16(1)][K(3)][i].get() == data + 2 * 32 + 16 + 3);
    EXPECT_TRUE(a[K8(1)][K(12)].get() == a[K(20)].get());
}

UTEST(Tensor, SingleFoldedEntry) {
    // SmemA lists I only as I16: a fine I subscript lands in its I16 unit.
    uint4 data[SmemA::storage_size()];
    const auto s = SmemA(data);
    EXPECT_TRUE(s[I16(1)].get() == data + 32);
    EXPECT_TRUE(s[I(16)].get() == data + 32);
    EXPECT_TRUE(s[I(15)].get() == data);
    EXPECT_TRUE(s[I(10)][I(10)].get() == data + 32);
    EXPECT_TRUE(s[PING(1)][K16(1)][CHECKERS(5)].get() == data + 128 + 64 + 5);
    EXPECT_TRUE(s[K(16)].get() == data + 64);
    EXPECT_TRUE(s[K(8)].get() == data);  // K8 is finer than K16: it does not reach a unit
}

UTEST(Tensor, CustomStrides) {
    float data[C::storage_size()];
    const auto c = C(data);
    const auto tile = C_tile(c[I(4)][J(8)].get());
    EXPECT_TRUE(tile[I(1)][J(2)].get() == c[I(5)][J(10)].get());
    EXPECT_TRUE(tile[I(1)][J(2)].get() == data + 5 * 64 + 10);
}

UTEST(Tensor, ConstAndVectorElements) {
    uint4 storage[AGlobal::storage_size()] = {};
    storage[2 * 128 + 5 * 2 + 1].x = 42;
    const auto a = AGlobal(storage);
    EXPECT_TRUE((std::is_same_v<decltype(a[I(0)].get()), const uint4*>));
    EXPECT_EQ(a[K16(2)][I(5)][K8(1)]->x, 42u);
    EXPECT_EQ((*a[K(2 * 16 + 8)][I(5)]).x, 42u);  // K(40) folds to K16(2), K8(1)
    EXPECT_EQ(a[K(40 + 7)][I(5)]->x, 42u);        // K(47): still inside K8(1)

    // A writable tensor converts to a read-only one of the same layout.
    float data[A::storage_size()] = {};
    const auto writable = A(data);
    *writable[I(1)][K(1)] = 3.0f;
    using ConstA = spio::Tensor<const float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;
    const ConstA read_only = writable;
    EXPECT_EQ(*read_only[I(1)][K(1)], 3.0f);
    EXPECT_TRUE((!std::is_convertible_v<ConstA, A>));
}

UTEST(Tensor, DereferenceAndCursorAtOrigin) {
    float data[A::storage_size()] = {};
    data[0] = 7.0f;
    const auto a = A(data);
    EXPECT_EQ(*a, 7.0f);
    EXPECT_TRUE(a.cursor().get() == data);
    EXPECT_TRUE((std::is_same_v<decltype(a[I(0)]), A::cursor_type>));
}

UTEST(Tensor, CompoundIndexSubscript) {
    float data[A::storage_size()];
    const auto a = A(data);
    using Index = spio::CompoundIndex<spio::DimInfo<I, 16, 4>, spio::DimInfo<J, 4, 1>>;
    const auto index = Index(5 * 4 + 3);  // I(5), J(3): J is ignored by A
    EXPECT_TRUE(a[index].get() == data + 5 * 32);
}

UTEST(Tensor, CheckerboardSubscript) {
    uint4 data[SmemA::storage_size()];
    const auto s = SmemA(data);
    EXPECT_TRUE(s[SmemChecker(I(5), K8(1))].get() == data + 10);
    EXPECT_TRUE(s[SmemChecker(I(4), K8(0))].get() == data + 9);
}

UTEST(Tensor, SwizzleSubscript) {
    uint4 data[SmemSwizzled::storage_size()];
    const auto s = SmemSwizzled(data);
    EXPECT_TRUE(s[SmemSwizzle(I(5), K8(1))].get() == data + 44);
    EXPECT_TRUE(s[SmemSwizzle(I(9), K8(0))].get() == data + 73);
}
