// range (spio/range.h): typed counted loops over dimensions and tensors.
#include <type_traits>  // std::is_same_v
#include <vector>       // collected loop values

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // K, K8, I, J, A, AFolded, C_tile, ...

namespace {

constexpr int sum_of_range() {
    int total = 0;
    for (auto k : spio::range(K(5))) total += k.get();
    return total;
}

}  // namespace

static_assert(sum_of_range() == 0 + 1 + 2 + 3 + 4);

UTEST(Range, OverADimension) {
    int expected = 0;
    for (auto k : range(K(32))) {  // found by argument-dependent lookup
        static_assert(std::is_same_v<decltype(k), K>, "k should be of type K");
        EXPECT_TRUE(k == K(expected));
        ++expected;
    }
    EXPECT_EQ(expected, 32);
}

UTEST(Range, OverAFold) {
    std::vector<int> values;
    for (auto k8 : spio::range(K8(3))) {
        static_assert(std::is_same_v<decltype(k8), K8>);
        values.push_back(k8.get());
    }
    EXPECT_TRUE((values == std::vector<int>{0, 1, 2}));
}

UTEST(Range, BeginAndEnd) {
    std::vector<int> values;
    for (auto i : spio::range(I(3), I(6))) values.push_back(i.get());
    EXPECT_TRUE((values == std::vector<int>{3, 4, 5}));
    int count = 0;
    for (auto i : spio::range(I(6), I(6))) count += i.get() + 1;
    EXPECT_EQ(count, 0);
}

// Regression (B1): an end before the begin is an empty range, not a count through 2^32.
UTEST(Range, EndBeforeBeginIsEmpty) {
    constexpr int enough = 100;  // stops a runaway loop so that the test fails, not hangs
    int count = 0;
    for (auto k : spio::range(K(10), K(4))) {
        (void)k;
        if (++count > enough) break;
    }
    EXPECT_EQ(count, 0);
    const K remaining = K(5) - K(8);  // what is left of a last partial tile
    for (auto k : spio::range(remaining)) {
        (void)k;
        if (++count > enough) break;
    }
    EXPECT_EQ(count, 0);
    for (auto k8 : spio::range(K8(-3))) {
        (void)k8;
        if (++count > enough) break;
    }
    EXPECT_EQ(count, 0);
}

UTEST(Range, OverATensorSize) {
    int count = 0;
    for (auto k : spio::range(AFolded::size<K>())) {
        static_assert(std::is_same_v<decltype(k), K>);
        ++count;
    }
    EXPECT_EQ(count, 32);
}

UTEST(Range, OverATensorLastDimensionFastest) {
    float data[C_tile::storage_size()];
    const auto tile = C_tile(data);
    int n = 0;
    for (auto idx : spio::range(tile)) {
        static_assert(std::is_same_v<decltype(idx), spio::Coordinates<I, J>>);
        EXPECT_TRUE(idx.get<I>() == I(n / 32));
        EXPECT_TRUE(idx.get<J>() == J(n % 32));
        ++n;
    }
    EXPECT_EQ(n, 8 * 32);
}

UTEST(Range, OverAFoldedTensorHasOneEntryPerDimension) {
    float data[AFolded::storage_size()];
    const auto a = AFolded(data);
    int n = 0;
    for (auto idx : spio::range(a)) {
        static_assert(std::is_same_v<decltype(idx), spio::Coordinates<K8, I, K>>);
        EXPECT_TRUE(idx.get<K8>() == K8(n / 32));
        EXPECT_TRUE(idx.get<I>() == I(n / 8 % 4));
        EXPECT_TRUE(idx.get<K>() == K(n % 8));
        // The coordinates address each element once; a packed tensor in storage order.
        EXPECT_TRUE(a[idx].get() == data + n);
        ++n;
    }
    EXPECT_EQ(n, 128);
}

UTEST(Range, IgnoresTheTensorsStrides) {
    // C_tile has stride 64 for I; range(tensor) counts positions, not elements.
    int n = 0;
    for (auto idx : spio::range(C_tile())) {
        (void)idx;
        ++n;
    }
    EXPECT_EQ(n, C_tile::size());
}
