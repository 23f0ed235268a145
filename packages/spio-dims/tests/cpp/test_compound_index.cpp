// CompoundIndex (spio/compound_index.h): digits, size, get<D>(), coordinates, subscripts.
#include <type_traits>  // std::is_same_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // BlockIndex, ThreadIndex, I16, J16, ...

static_assert(BlockIndex::size() == 32 * 32);
static_assert(BlockIndex(70).get<I16>() == I16(2));
static_assert(std::is_same_v<BlockIndex::coordinates_type, spio::Coordinates<I16, J16>>);

UTEST(CompoundIndex, SizeAndDigits) {
    EXPECT_EQ(BlockIndex::size(), 1024);
    EXPECT_EQ(ThreadIndex::size(), 256);
    const auto block = BlockIndex(70);
    EXPECT_EQ(block.get(), 70);
    EXPECT_TRUE(block.get<I16>() == I16(2));
    EXPECT_TRUE(block.get<J16>() == J16(6));
    EXPECT_TRUE((std::is_same_v<decltype(block.get<J16>()), J16>));
    EXPECT_EQ(BlockIndex().get(), 0);
}

UTEST(CompoundIndex, EveryOffsetDecomposes) {
    for (int offset = 0; offset < ThreadIndex::size(); ++offset) {
        const auto thread = ThreadIndex(offset);
        EXPECT_EQ(thread.get<I>().get(), offset / 16);
        EXPECT_EQ(thread.get<J>().get(), offset % 16);
    }
}

UTEST(CompoundIndex, OutermostDigitKeepsCounting) {
    EXPECT_EQ(ThreadIndex(256 + 17).get<I>().get(), 17);  // no wrap on the outermost entry
    EXPECT_EQ(ThreadIndex(256 + 17).get<J>().get(), 1);
}

UTEST(CompoundIndex, CustomStridesAndOrder) {
    // The outermost entry is the one with the largest stride, wherever it is listed.
    using Transposed = spio::CompoundIndex<spio::DimInfo<J, 4, 1>, spio::DimInfo<I, 8, 4>>;
    const auto t = Transposed(4 * 5 + 3);
    EXPECT_EQ(t.get<I>().get(), 5);
    EXPECT_EQ(t.get<J>().get(), 3);
    EXPECT_TRUE((std::is_same_v<Transposed::coordinates_type, spio::Coordinates<J, I>>));
}

UTEST(CompoundIndex, FoldsOfOneBase) {
    using Folded = spio::CompoundIndex<spio::DimInfo<K8, 2, 16>, spio::DimInfo<I, 4, 4>,
                                       spio::DimInfo<K, 4, 1>>;
    const auto index = Folded(1 * 16 + 2 * 4 + 3);
    EXPECT_TRUE(index.get<K8>() == K8(1));
    EXPECT_TRUE(index.get<K>() == K(3));  // a listed entry: its digit
    EXPECT_TRUE(index.get<I>() == I(2));
    EXPECT_TRUE(index.get<K16>() == K16(0));  // another fold: (8 + 3) / 16
    EXPECT_EQ((index.coordinates().sum_of_base<K, 1>()), 11);
}

UTEST(CompoundIndex, AnotherFoldOfAListedBase) {
    const auto block = BlockIndex(70);
    EXPECT_TRUE(block.get<I>() == I(32));
    EXPECT_TRUE(block.get<J8>() == J8(12));
}

UTEST(CompoundIndex, ConvertsToCoordinates) {
    const auto block = BlockIndex(70);
    const spio::Coordinates<I16, J16> c = block;
    EXPECT_TRUE(c.get<I16>() == I16(2));
    EXPECT_TRUE(c == block.coordinates());
    EXPECT_TRUE(block + ThreadIndex(17) == spio::make_coordinates(I(33), J(97)));
    EXPECT_TRUE(block < spio::make_coordinates(I(512), J(512)));
}

UTEST(CompoundIndex, Subscript) {
    float data[512 * 512 / 16];
    using Tile = spio::Tensor<float, spio::DimInfo<I, 32, 64>, spio::DimInfo<J, 64, 1>>;
    const auto tile = Tile(data);
    const auto thread = ThreadIndex(3 * 16 + 5);
    EXPECT_TRUE(tile[thread].get() == data + 3 * 64 + 5);
    EXPECT_TRUE(tile[thread][I16(1)].get() == data + 19 * 64 + 5);
}
