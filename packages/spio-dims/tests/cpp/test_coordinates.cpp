// Coordinates (spio/coordinates.h): construction, get<D>(), projected + and comparisons.
#include <type_traits>  // std::is_same_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // I, J, K, K8, A, ...

static_assert(spio::make_coordinates(I(1), J(2)).get<J>() == J(2));
static_assert((spio::make_coordinates(I(1), J(2)) + K(3)).get<K>() == K(3));
static_assert(std::is_trivially_copyable_v<spio::Coordinates<I, J, K>>);

UTEST(Coordinates, MakeAndGet) {
    const auto c = spio::make_coordinates(I(2), J(3), K(4));
    EXPECT_TRUE((std::is_same_v<decltype(c), const spio::Coordinates<I, J, K>>));
    EXPECT_TRUE(c.get<I>() == I(2));
    EXPECT_TRUE(c.get<J>() == J(3));
    EXPECT_TRUE(c.get<K>() == K(4));
    EXPECT_TRUE(c.entry<0>() == I(2));
    EXPECT_TRUE(c.entry<2>() == K(4));
    const spio::Coordinates<I, J> zero;
    EXPECT_TRUE(zero.get<I>() == I(0) && zero.get<J>() == J(0));
    EXPECT_TRUE(&c.coordinates() == &c);
}

UTEST(Coordinates, GetSumsTheFoldsOfABase) {
    const auto c = spio::make_coordinates(K8(1), I(2), K(4));
    EXPECT_TRUE(c.get<K8>() == K8(1));  // an entry, as stored
    EXPECT_TRUE(c.get<K>() == K(4));    // an entry, as stored
    EXPECT_TRUE(c.get<K16>() == K16(0));
    EXPECT_EQ((c.sum_of_base<K, 1>()), 12);
    const auto d = spio::make_coordinates(K8(3), K(4));
    EXPECT_TRUE(d.get<K16>() == K16(1));  // 28 / 16, rounded toward zero
    EXPECT_TRUE(spio::make_coordinates(I16(2)).get<I>() == I(32));
}

UTEST(Coordinates, AdditionAddsSharedBasesAndPassesTheOthers) {
    const auto origin = spio::make_coordinates(I(12), J(60));
    const auto local = spio::make_coordinates(I(1), J(2), K(3));
    const auto world = origin + local;
    EXPECT_TRUE((std::is_same_v<decltype(world), const spio::Coordinates<I, J, K>>));
    EXPECT_TRUE(world.get<I>() == I(13));
    EXPECT_TRUE(world.get<J>() == J(62));
    EXPECT_TRUE(world.get<K>() == K(3));

    // Left entries keep their order; right-only entries follow.
    const auto mixed = spio::make_coordinates(K(1), I(2)) + spio::make_coordinates(J(3), K(4));
    EXPECT_TRUE((std::is_same_v<decltype(mixed), const spio::Coordinates<K, I, J>>));
    EXPECT_TRUE(mixed.get<K>() == K(5));
}

UTEST(Coordinates, AdditionWithALoneDimension) {
    const auto idx = spio::make_coordinates(I(1), J(2));
    const auto with_k = idx + K(3);
    EXPECT_TRUE((std::is_same_v<decltype(with_k), const spio::Coordinates<I, J, K>>));
    EXPECT_TRUE(with_k.get<K>() == K(3));
    const auto more_i = I(5) + idx;
    EXPECT_TRUE((std::is_same_v<decltype(more_i), const spio::Coordinates<I, J>>));
    EXPECT_TRUE(more_i.get<I>() == I(6));
}

UTEST(Coordinates, AdditionOfFoldsCountsInTheCommonUnit) {
    const auto folded = spio::make_coordinates(K8(1), I(2), K(4));
    const auto sum = folded + K(5);
    // The shared base K collapses to one entry at K8's position, in the unit of K.
    EXPECT_TRUE((std::is_same_v<decltype(sum), const spio::Coordinates<K, I>>));
    EXPECT_TRUE(sum.get<K>() == K(17));
    const auto chunks = spio::make_coordinates(K16(1)) + spio::make_coordinates(K8(1));
    EXPECT_TRUE((std::is_same_v<decltype(chunks), const spio::Coordinates<K8>>));
    EXPECT_TRUE(chunks.get<K8>() == K8(3));
    // Passed-through folds keep their entries.
    const auto passed = folded + J(1);
    EXPECT_TRUE((std::is_same_v<decltype(passed), const spio::Coordinates<K8, I, K, J>>));
}

UTEST(Coordinates, ComparisonTestsTheSharedBases) {
    const auto world = spio::make_coordinates(I(3), J(70), K(5));
    const auto extents = spio::make_coordinates(I(16), K(32));
    EXPECT_TRUE(world < extents);  // J is not compared
    EXPECT_FALSE(spio::make_coordinates(I(16), K(5)) < extents);
    EXPECT_FALSE(spio::make_coordinates(I(3), K(32)) < extents);
    EXPECT_TRUE(spio::make_coordinates(I(16), K(5)) <= extents);
    EXPECT_TRUE(extents > world);
    EXPECT_TRUE(extents >= spio::make_coordinates(I(16), K(32), J(1000)));
    EXPECT_TRUE(world == spio::make_coordinates(K(5), I(3)));
    EXPECT_TRUE(world != spio::make_coordinates(K(5), I(4)));
    EXPECT_TRUE(world < K(6));  // a lone dimension compares as coordinates
    EXPECT_FALSE(world < I(3));
    // Folded entries compare by their sums.
    EXPECT_TRUE(spio::make_coordinates(K8(1), K(4)) == K(12));
    EXPECT_TRUE(spio::make_coordinates(K8(3), K(7)) < spio::make_coordinates(K16(2)));
    EXPECT_FALSE(spio::make_coordinates(K8(4)) < spio::make_coordinates(K16(2)));
}

UTEST(Coordinates, ProjectedOperatorsAreConstexpr) {
    constexpr auto world = spio::make_coordinates(I(1), J(2)) + spio::make_coordinates(K(3));
    static_assert(world.get<K>() == K(3));
    static_assert(world < spio::make_coordinates(I(2), K(4)));
    EXPECT_TRUE(world.get<I>() == I(1));
}
