// Dim and Fold (spio/dim.h): integer behaviour, cross-fold arithmetic, re-folding.
#include <type_traits>  // std::is_same_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // I, J, K, K8, BLOCK_I, ...

// Everything is constexpr: the same facts hold at compile time.
static_assert(I(2) + I(4) == I(6));
static_assert(K8(3) == K(24));
static_assert(K8(3) + K(4) == K(28));
static_assert(K(24).fold<8>() == K8(3));
static_assert(std::is_same_v<I, spio::Fold<I, 1, I>::dim_type>);
static_assert(sizeof(I) == sizeof(int) && sizeof(K8) == sizeof(int));
static_assert(std::is_trivially_copyable_v<I> && std::is_trivially_copyable_v<K8>);

UTEST(Dim, BehavesLikeAnInteger) {
    EXPECT_TRUE(I(2) + I(4) == I(6));
    EXPECT_TRUE(I(6) - I(4) == I(2));
    EXPECT_TRUE(I(8) < I(10));
    EXPECT_TRUE(I(8) <= I(8));
    EXPECT_TRUE(I(9) > I(8));
    EXPECT_TRUE(I(9) >= I(9));
    EXPECT_TRUE(I(3) != I(4));
    EXPECT_FALSE(I(3) == I(4));
    EXPECT_TRUE(I(7) % 4 == I(3));
    EXPECT_TRUE(I(7) % I(4) == I(3));
    EXPECT_TRUE(I(7) / 2 == I(3));
    EXPECT_EQ(I(7) / I(2), 3);
    EXPECT_TRUE(I(3) * 2 == I(6));
    EXPECT_TRUE(2 * I(3) == I(6));
    EXPECT_TRUE(-I(3) == I(-3));
    EXPECT_EQ(I(5).get(), 5);
    EXPECT_EQ(I().get(), 0);
}

UTEST(Dim, ResultTypesKeepTheDimension) {
    EXPECT_TRUE((std::is_same_v<decltype(I(1) + I(2)), I>));
    EXPECT_TRUE((std::is_same_v<decltype(I(1) - I(2)), I>));
    EXPECT_TRUE((std::is_same_v<decltype(I(1) * 2), I>));
    EXPECT_TRUE((std::is_same_v<decltype(2 * I(1)), I>));
    EXPECT_TRUE((std::is_same_v<decltype(I(1) % 2), I>));
    EXPECT_TRUE((std::is_same_v<decltype(I(1) / 2), I>));
    EXPECT_TRUE((std::is_same_v<decltype(I(1) / I(2)), int>));
    EXPECT_TRUE((std::is_same_v<decltype(-I(1)), I>));
    EXPECT_TRUE((!std::is_same_v<I, J>));
    EXPECT_TRUE((!std::is_convertible_v<int, I>));
    EXPECT_TRUE((!std::is_convertible_v<I, int>));
}

UTEST(Dim, CompoundAssignment) {
    I i(3);
    i += I(2);
    EXPECT_TRUE(i == I(5));
    i -= I(1);
    EXPECT_TRUE(i == I(4));
    ++i;
    EXPECT_TRUE(i == I(5));
    --i;
    EXPECT_TRUE(i == I(4));
    K k(1);
    k += K8(1);  // a whole number of K: K(9)
    EXPECT_TRUE(k == K(9));
    k -= K16(0);
    EXPECT_TRUE(k == K(9));
    K8 k8(1);
    k8 += K16(1);  // K8(3)
    EXPECT_TRUE(k8 == K8(3));
    EXPECT_TRUE((std::is_same_v<decltype(k8 += K8(1)), K8&>));
    EXPECT_TRUE((std::is_same_v<decltype(++i), I&>));
}

UTEST(Fold, ComparesAcrossFoldsOfOneBase) {
    EXPECT_TRUE(K8(3) == K(3 * 8));
    EXPECT_TRUE(K(24) == K8(3));
    EXPECT_TRUE(K8(1) != K(9));
    EXPECT_TRUE(K8(1) < K(9));
    EXPECT_TRUE(K(9) > K8(1));
    EXPECT_TRUE(K8(1) <= K(8));
    EXPECT_TRUE(K16(1) >= K8(2));
    EXPECT_TRUE(K16(1) == K8(2));
}

UTEST(Fold, SumsCountInTheGcdOfTheStrides) {
    EXPECT_TRUE(K8(3) + K(4) == K(3 * 8 + 4));
    EXPECT_TRUE((std::is_same_v<decltype(K8(3) + K(4)), K>));
    EXPECT_TRUE((std::is_same_v<decltype(K(4) + K8(3)), K>));
    EXPECT_TRUE((std::is_same_v<decltype(K16(1) + K8(1)), K8>));
    EXPECT_TRUE((std::is_same_v<decltype(K8(1) + K16(1)), K8>));
    EXPECT_TRUE(K16(1) + K8(1) == K8(3));
    EXPECT_TRUE((std::is_same_v<decltype(K8(1) + K8(1)), K8>));
    EXPECT_EQ((K8(1) + K8(2)).get(), 3);
    // Strides 6 and 4: the unit of the sum is the anonymous fold by 2.
    using I6 = spio::Fold<I, 6>;
    using I4 = spio::Fold<I, 4>;
    EXPECT_TRUE((std::is_same_v<decltype(I6(1) + I4(1)), spio::Fold<I, 2>>));
    EXPECT_EQ((I6(1) + I4(1)).get(), 5);
    EXPECT_TRUE(K8(3) - K(4) == K(20));
    EXPECT_TRUE(K(28) % K8(1) == K(4));
    EXPECT_EQ(K(28) / K8(1), 3);
}

UTEST(Fold, RefoldUnfoldCast) {
    EXPECT_TRUE(K(24).fold<8>() == K8(3));
    EXPECT_TRUE((std::is_same_v<decltype(K(24).fold<8>()), K8>));
    EXPECT_TRUE(J16(1).fold<8>() == J8(2));
    EXPECT_EQ(J16(1).fold<8>().get(), 2);
    EXPECT_TRUE((std::is_same_v<decltype(J16(1).fold<8>()), J8>));
    EXPECT_TRUE((std::is_same_v<decltype(K8(3).fold<1>()), K>));
    EXPECT_EQ(K(27).fold<8>().get(), 3);  // rounds toward zero
    EXPECT_TRUE(K8(3).unfold() == K(24));
    EXPECT_TRUE((std::is_same_v<decltype(K8(3).unfold()), K>));
    EXPECT_TRUE(X(5).cast<I>() == I(5));
    EXPECT_TRUE((std::is_same_v<decltype(X(5).cast<I>()), I>));
    EXPECT_EQ(K8(3).cast<K>().get(), 3);  // the raw value, not the unfolded one
}

UTEST(Fold, NamedFoldsAreDistinctTypes) {
    EXPECT_TRUE((!std::is_same_v<BLOCK_I, spio::Fold<I, 64>>));
    EXPECT_TRUE((std::is_same_v<BLOCK_I::base_type, I>));
    EXPECT_EQ(BLOCK_I::stride, 64);
    EXPECT_TRUE((std::is_same_v<decltype(BLOCK_I(1) + BLOCK_I(2)), BLOCK_I>));
    EXPECT_TRUE(BLOCK_I(1) == I(64));
    EXPECT_TRUE(BLOCK_I(2).unfold() == I(128));
    EXPECT_TRUE((std::is_same_v<decltype(BLOCK_I(1) + I(3)), I>));
    EXPECT_TRUE(BLOCK_I(1) + I(3) == I(67));
    EXPECT_TRUE((std::is_same_v<decltype(BLOCK_I(1).fold<16>()), I16>));
    EXPECT_TRUE(BLOCK_I(1).fold<16>() == I16(4));
    // Seed 001: global_i = block_i.unfold() + x.cast<I>().
    const BLOCK_I block_i(3);
    const auto global_i = block_i.unfold() + X(5).cast<I>();
    EXPECT_TRUE((std::is_same_v<decltype(global_i), const I>));
    EXPECT_TRUE(global_i == I(197));
}

UTEST(Fold, AnonymousFoldsAreOneType) {
    EXPECT_TRUE((std::is_same_v<K8, spio::Fold<K, 8, void>>));
    EXPECT_TRUE((std::is_same_v<K8::dim_type, K8>));
    EXPECT_TRUE((std::is_same_v<K8::base_type, K>));
    EXPECT_EQ(K8::stride, 8);
    EXPECT_EQ(K::stride, 1);
}
