// Lesson 3 of the typed-dimensions tutorial: folded dimensions.
#include "spio_test.h"  // UTEST, EXPECT_*, and the standard headers the lessons use

// The tutorial's text, kept as written (clang-format would reflow its blank lines).
// clang-format off

// Define a Tensor with a folded dimension K and interleaved layout.
// Layout: K8(4) x I(4) x K(8)

/*@spio
[
Tensor("A", dtype.float, Dims(k8=4, i=4, k=-1))
]
@spio*/

UTEST(Lesson3, Folding) {

    // Create tensor a.
    A::data_type data[A::storage_size()];
    auto a = A(data);

    // Folded dimension K8 is dimension K folded by stride 8.

    // Dimensions are compatible with their folds:
    EXPECT_TRUE(K8(3) == K(3 * 8));
    EXPECT_TRUE(K8(3) + K(4) == K(3 * 8 + 4));

    // Use constant I ..
    auto i = I(2);

    // .. and loop over K in range [0 .. 31] inclusive.
    for (auto k : range(K(32))) {

        // The loop variable has type K.
        static_assert(std::is_same_v<decltype(k), K>, "k should be of type K");

        // Spio accepts logical dimension K
        // and folds it into the tensor's K8 and K dimensions automatically ..
        auto b = a[i][k];

        // .. saving the user from folding it manually.
        auto k8 = K8(k.get() / 8);
        auto km8 = K(k.get() % 8);
        auto c = a[i][k8][km8];

        EXPECT_TRUE(b.get() == c.get());
    }
}

// Spio accumulates subscripts in logical coordinates before folding, so repeated subscripts
// are equivalent to their sum. This enables correct carry-over when subscripts cross fold
// boundaries.
UTEST(Lesson3, Accumulation) {

    // Set-up for the lesson's snippet: a tensor whose elements are all different.
    A::data_type data[A::storage_size()];
    std::iota(std::begin(data), std::end(data), 0.0f);
    auto a = A(data);
    auto i = I(2);

    // K(4) + K(4) == K8(1)
    EXPECT_TRUE(*a[i][K(4)][K(4)] == *a[i][K8(1)]);

    // K(7) + K(5) = K(12) == K8(1) + K(4)
    EXPECT_TRUE(*a[i][K(7)][K(5)] == *a[i][K8(1)][K(4)]);
}

// clang-format on

UTEST_MAIN()
