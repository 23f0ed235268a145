// Every C++ spelling of docs/dims/generated-code.md (except the device-only fragments) compiles
// and means what the contract says.
#include <type_traits>  // std::is_same_v

#include "spio_test.h"  // UTEST, EXPECT_*
#include "spio/spio.h"  // the library under test

namespace contract {

// Dim("i"), and the dimensions the specs below use.
struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};

struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};

struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};

struct CHECKERS : spio::Dim<CHECKERS> {
    using spio::Dim<CHECKERS>::Dim;
};

struct SWIZZLE : spio::Dim<SWIZZLE> {
    using spio::Dim<SWIZZLE>::Dim;
};

// Anonymous folds from Dims keys.
using I16 = spio::Fold<I, 16>;
using J16 = spio::Fold<J, 16>;
using K8 = spio::Fold<K, 8>;
using K16 = spio::Fold<K, 16>;

// Fold("block_i", "i", 64)
struct BLOCK_I : spio::Fold<I, 64, BLOCK_I> {
    using spio::Fold<I, 64, BLOCK_I>::Fold;
};

// Tensor("C_tile", dtype.float, Dims(i=8, j=32), Strides(i=64))
using C_tile = spio::Tensor<float, spio::DimInfo<I, 8, 64>, spio::DimInfo<J, 32, 1>>;
// Tensor("A", dtype.uint4, Dims(k16=4, i=64, k8=2), constant=True)
using A = spio::Tensor<const uint4, spio::DimInfo<K16, 4, 128>, spio::DimInfo<I, 64, 2>,
                       spio::DimInfo<K8, 2, 1>>;

// CompoundIndex("BlockIndex", Dims(i16=32, j16=32))
using BlockIndex = spio::CompoundIndex<spio::DimInfo<I16, 32, 32>, spio::DimInfo<J16, 32, 1>>;
// CompoundIndex("ThreadIndex", Dims(i=16, j=16), init="threadIdx.x")
using ThreadIndex =
    spio::CompoundIndexFrom<spio::ThreadIdxX, spio::DimInfo<I, 16, 16>, spio::DimInfo<J, 16, 1>>;
// Every init source (threadIdx.x|y|z, blockIdx.x|y|z) names a type on the host too.
using FromBlockY = spio::CompoundIndexFrom<spio::BlockIdxY, spio::DimInfo<J16, 32, 1>>;
static_assert(std::is_class_v<spio::ThreadIdxY> && std::is_class_v<spio::ThreadIdxZ> &&
              std::is_class_v<spio::BlockIdxX> && std::is_class_v<spio::BlockIdxZ>);
static_assert(FromBlockY(3).get<J16>() == J16(3));

// Checkerboard("SmemChecker", "i", "k8", "checkers", banks=8)
using SmemChecker = spio::CheckerboardIndex<8, I, K8, CHECKERS>;

// Swizzle("SmemSwizzle", "i", "k8", "swizzle", cells=8)
using SmemSwizzle = spio::SwizzleIndex<8, I, K8, SWIZZLE>;

// Dims(k8=4, i=4, k=-1): K's size is derived as the K8 stride over the K stride.
using Folded =
    spio::Tensor<float, spio::DimInfo<K8, 4, 32>, spio::DimInfo<I, 4, 8>, spio::DimInfo<K, 8, 1>>;

}  // namespace contract

UTEST(Contract, DimIsItsOwnFoldByOne) {
    using contract::I;
    EXPECT_TRUE((std::is_same_v<spio::Dim<I>, spio::Fold<I, 1, I>>));
    EXPECT_TRUE((std::is_base_of_v<spio::Fold<I, 1, I>, I>));
}

UTEST(Contract, AnonymousFoldsAreAliases) {
    using contract::K;
    using contract::K8;
    EXPECT_TRUE((std::is_same_v<K8, spio::Fold<K, 8>>));
    EXPECT_TRUE(K8(3) == K(24));
}

UTEST(Contract, NamedFold) {
    using contract::BLOCK_I;
    using contract::I;
    EXPECT_TRUE(BLOCK_I(2) == I(128));
    EXPECT_TRUE((!std::is_same_v<BLOCK_I, spio::Fold<I, 64>>));
}

UTEST(Contract, TensorsWithStridesAndConstant) {
    using namespace contract;
    EXPECT_EQ(C_tile::storage_size(), 1 + 7 * 64 + 31);
    EXPECT_TRUE((std::is_same_v<A::data_type, const uint4>));
    EXPECT_TRUE(A::size<K>() == K(64));
    EXPECT_TRUE(A::size<I>() == I(64));
    EXPECT_TRUE(Folded::size<K>() == K(32));
}

UTEST(Contract, CompoundIndices) {
    using namespace contract;
    EXPECT_EQ(BlockIndex::size(), 1024);
    EXPECT_TRUE(ThreadIndex(17).get<J>() == J(1));
    EXPECT_TRUE(
        (std::is_base_of_v<spio::CompoundIndex<spio::DimInfo<I, 16, 16>, spio::DimInfo<J, 16, 1>>,
                           ThreadIndex>));
    // Host code has no default constructor: it would read threadIdx.x.
    EXPECT_TRUE((!std::is_default_constructible_v<ThreadIndex>));
    EXPECT_TRUE((std::is_default_constructible_v<BlockIndex>));
}

UTEST(Contract, Checkerboard) {
    using namespace contract;
    EXPECT_TRUE(SmemChecker(I(5), K8(1)).offset() == CHECKERS(10));
}

UTEST(Contract, Swizzle) {
    using namespace contract;
    EXPECT_TRUE(SmemSwizzle(I(5), K8(1)).offset() == SWIZZLE(44));
}

UTEST(Contract, GeneratedNamesFindLibraryFunctionsByLookup) {
    using contract::I;
    using contract::J;
    // Unqualified, from outside namespace spio.
    const auto c = make_coordinates(I(1), J(2));
    int n = 0;
    for (auto i : range(I(3))) n += i.get();
    EXPECT_EQ(n, 3);
    EXPECT_TRUE(c.get<J>() == J(2));
}
