// Dimensions and folds: integers that know which dimension they count, and in what units.
//
// A dimension is a distinct type that behaves like an int:
//
//     struct I : spio::Dim<I> {
//         using spio::Dim<I>::Dim;
//     };
//     I(2) + I(4) == I(6);  I(8) < I(10);  I(7) % 4 == I(3);  2 * I(3) == I(6)
//     I(5) == J(5);         // does not compile: I and J are different dimensions
//     I(5) + 5;             // does not compile: an int is not a dimension
//
// A fold counts a base dimension in units of Stride: K8 = Fold<K, 8> counts K in chunks of 8,
// so K8(3) is K(24). Every fold of one base is comparable and addable with every other, and the
// result counts in the finest unit that represents it exactly (the gcd of the strides):
//
//     K8(3) == K(24);  K8(3) + K(4) == K(28);  K16(1) + K8(1) == K8(3)
//
// spio::Dim<I> is spio::Fold<I, 1, I>: a dimension is its own fold by 1. A named fold
// (struct BLOCK_I : spio::Fold<I, 64, BLOCK_I>) is its own type; an anonymous fold
// (using K8 = spio::Fold<K, 8>) is the same type wherever it is spelled.
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"  // conditional_t, is_same_v, is_same_type, enable_if_t, gcd

namespace spio {

template <typename Base, int Stride, typename Self = void>
class Fold;

namespace detail {

// The type a fold's arithmetic returns: the named type when there is one (BLOCK_I), else the
// anonymous Fold itself (Fold<K, 8>).
template <typename AnonymousFold, typename Self>
struct FoldSelf {
    using type = Self;
};

template <typename AnonymousFold>
struct FoldSelf<AnonymousFold, void> {
    using type = AnonymousFold;
};

// fold_of_t<K, N>: the dimension K counted in units of N; K itself when N is 1, else Fold<K, N>.
template <typename Base, int N>
using fold_of_t = conditional_t<N == 1, Base, Fold<Base, N>>;

// is_fold_v<T>: whether T is a Fold or derives from one (every dimension does).
template <typename B, int S, typename X>
SPIO_HOST_DEVICE constexpr bool fold_probe(const Fold<B, S, X>*) {
    return true;
}

SPIO_HOST_DEVICE constexpr bool fold_probe(const void*) { return false; }

template <typename T>
inline constexpr bool is_fold_v = fold_probe(static_cast<const T*>(nullptr));

// base_of_t<T>: the base dimension of fold T, or void when T is no fold.
template <typename T, bool = is_fold_v<T>>
struct BaseOf {
    using type = void;
};

template <typename T>
struct BaseOf<T, true> {
    using type = typename T::base_type;
};

template <typename T>
using base_of_t = typename BaseOf<T>::type;

// Whether Fold<Base, Stride, Self> folds a dimension, which is its own base: I, not an int and
// not the fold K8 (whose base is K; Fold<K8, 2> would be Fold<K, 16>). Dim<I> is I's fold by 1
// while I is still being declared, so Base == Self passes unchecked. (Variable templates, like
// is_same_type: these checks add no global to a kernel's module.)
template <typename Base, typename Self>
inline constexpr bool folds_a_dimension = is_same_type<base_of_t<Base>, Base>;

template <typename Base>
inline constexpr bool folds_a_dimension<Base, Base> = true;

// Whether T is a floating-point type, which a dimension never takes as a count or a scale
// (I(3) * 2.5 would truncate to I(7) without a word).
template <typename T>
inline constexpr bool is_floating_point_v = false;

template <>
inline constexpr bool is_floating_point_v<float> = true;

template <>
inline constexpr bool is_floating_point_v<double> = true;

template <>
inline constexpr bool is_floating_point_v<long double> = true;

}  // namespace detail

/// A count of dimension `Base` in units of `Stride` (a fold of `Base` by `Stride`).
///
/// `Self` names the derived type for named folds and dimensions (CRTP); arithmetic returns
/// `dim_type`, which is `Self`, or `Fold<Base, Stride>` when `Self` is void.
///
///     K(24).fold<8>() == K8(3)      // re-fold to absolute stride 8 (integer division)
///     J16(1).fold<8>() == J8(2)
///     K8(3).unfold() == K(24)       // back to the base dimension
///     X(5).cast<I>() == I(5)        // same raw value, other dimension
template <typename Base, int Stride, typename Self>
class Fold {
    static_assert(Stride > 0, "a fold's stride must be positive");
    static_assert(detail::folds_a_dimension<Base, Self>,
                  "Fold<Base, Stride>: Base must be a dimension, not an int or another fold "
                  "(a fold of K8 by 2 is Fold<K, 16>)");

public:
    using base_type = Base;
    using dim_type = typename detail::FoldSelf<Fold, Self>::type;
    static constexpr int stride = Stride;

    constexpr Fold() = default;
    SPIO_HOST_DEVICE explicit constexpr Fold(int value) : _value(value) {}

    /// A count is an int: I(3.7) would silently be I(3).
    template <typename F, detail::enable_if_t<detail::is_floating_point_v<F>, int> = 0>
    SPIO_HOST_DEVICE Fold(F) = delete;

    /// The raw count, in units of `stride`.
    SPIO_HOST_DEVICE constexpr int get() const { return _value; }

    /// This value counted in units of N of the base dimension (rounding toward zero):
    /// K(24).fold<8>() == K8(3). The result is the base itself when N is 1.
    template <int N>
    SPIO_HOST_DEVICE constexpr detail::fold_of_t<Base, N> fold() const {
        static_assert(N > 0, "fold<N>() needs a positive stride N");
        return detail::fold_of_t<Base, N>(_value * Stride / N);
    }

    /// This value in the base dimension: K8(3).unfold() == K(24).
    SPIO_HOST_DEVICE constexpr Base unfold() const { return Base(_value * Stride); }

    /// The same raw value in another dimension: X(5).cast<I>() == I(5).
    template <typename Other>
    SPIO_HOST_DEVICE constexpr Other cast() const {
        static_assert(detail::is_fold_v<Other>,
                      "cast<Other>() needs a dimension or a fold Other (get() gives the int)");
        return Other(_value);
    }

    SPIO_HOST_DEVICE constexpr dim_type operator-() const { return dim_type(-_value); }

    SPIO_HOST_DEVICE constexpr dim_type& operator++() {
        ++_value;
        return self();
    }

    SPIO_HOST_DEVICE constexpr dim_type& operator--() {
        --_value;
        return self();
    }

    /// Postfix ++ and --, for loops written by habit (for (I i(0); i < n; i++)).
    SPIO_HOST_DEVICE constexpr dim_type operator++(int) {
        const dim_type before = self();
        ++_value;
        return before;
    }

    SPIO_HOST_DEVICE constexpr dim_type operator--(int) {
        const dim_type before = self();
        --_value;
        return before;
    }

    /// Add a fold of the same base in place. The addend must be a whole number of this fold's
    /// units (K += K8(1) adds 8 to a K; K8 += K(3) does not compile: write k8 + K(3)).
    template <typename B, int S, typename X>
    SPIO_HOST_DEVICE constexpr dim_type& operator+=(const Fold<B, S, X>& other) {
        static_assert(detail::is_same_v<B, Base>,
                      "cannot add a different dimension in place: += needs a fold of the same "
                      "base dimension");
        static_assert(S % Stride == 0,
                      "cannot add a finer fold in place: the sum is not a whole number of this "
                      "fold (write a + b, which counts in the finer unit)");
        _value += other.get() * (S / Stride);
        return self();
    }

    /// Subtract a fold of the same base in place; same rules as +=.
    template <typename B, int S, typename X>
    SPIO_HOST_DEVICE constexpr dim_type& operator-=(const Fold<B, S, X>& other) {
        static_assert(detail::is_same_v<B, Base>,
                      "cannot subtract a different dimension in place: -= needs a fold of the "
                      "same base dimension");
        static_assert(S % Stride == 0,
                      "cannot subtract a finer fold in place: the difference is not a whole "
                      "number of this fold (write a - b, which counts in the finer unit)");
        _value -= other.get() * (S / Stride);
        return self();
    }

private:
    SPIO_HOST_DEVICE constexpr dim_type& self() { return static_cast<dim_type&>(*this); }

    int _value = 0;
};

/// A dimension: the fold of itself by 1. Declare one as
/// `struct I : spio::Dim<I> { using spio::Dim<I>::Dim; };`.
template <typename D>
using Dim = Fold<D, 1, D>;

namespace detail {

// The type of a sum of folds of one base: it counts in the gcd of their strides and is the
// left operand's type when that counts in the gcd, else the right's, else the base dimension
// (gcd 1) or the anonymous fold by the gcd.
//     K8 + K -> K;   K16 + K8 -> K8;   Fold<I, 6> + Fold<I, 4> -> Fold<I, 2>
template <typename A, typename B>
struct CommonFold {
    static constexpr int stride = gcd(A::stride, B::stride);
    using type = conditional_t<A::stride == stride, typename A::dim_type,
                               conditional_t<B::stride == stride, typename B::dim_type,
                                             fold_of_t<typename A::base_type, stride>>>;
};

template <typename A, typename B>
using common_fold_t = typename CommonFold<A, B>::type;

// Two folds of one base as counts of the unit of their sum: K8(3), K(4) -> 24, 4.
struct CommonUnits {
    int lhs;
    int rhs;
};

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr CommonUnits common_units(const Fold<B1, S1, X1>& a,
                                                    const Fold<B2, S2, X2>& b) {
    constexpr int unit = gcd(S1, S2);
    return {a.get() * (S1 / unit), b.get() * (S2 / unit)};
}

}  // namespace detail

// Arithmetic between folds of one base: the result counts in the gcd of the strides
// (see CommonFold). Folds of different bases do not mix.

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr detail::common_fold_t<Fold<B1, S1, X1>, Fold<B2, S2, X2>> operator+(
    const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot add different dimensions: + needs two folds of one base dimension");
    using Sum = detail::common_fold_t<Fold<B1, S1, X1>, Fold<B2, S2, X2>>;
    const detail::CommonUnits u = detail::common_units(a, b);
    return Sum(u.lhs + u.rhs);
}

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr detail::common_fold_t<Fold<B1, S1, X1>, Fold<B2, S2, X2>> operator-(
    const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot subtract different dimensions: - needs two folds of one base dimension");
    using Difference = detail::common_fold_t<Fold<B1, S1, X1>, Fold<B2, S2, X2>>;
    const detail::CommonUnits u = detail::common_units(a, b);
    return Difference(u.lhs - u.rhs);
}

/// The remainder of a by b, both folds of one base: K(28) % K8(1) == K(4).
template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr detail::common_fold_t<Fold<B1, S1, X1>, Fold<B2, S2, X2>> operator%(
    const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot take the remainder of different dimensions: % needs two folds of one "
                  "base dimension");
    using Remainder = detail::common_fold_t<Fold<B1, S1, X1>, Fold<B2, S2, X2>>;
    const detail::CommonUnits u = detail::common_units(a, b);
    return Remainder(u.lhs % u.rhs);
}

/// How many b fit in a, as a plain int (a ratio has no dimension): K(28) / K8(1) == 3.
template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr int operator/(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot divide different dimensions: / needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs / u.rhs;
}

// Scaling by an int keeps the dimension: 2 * I(3) == I(6), I(7) / 2 == I(3), I(7) % 4 == I(3).

template <typename B, int S, typename X>
SPIO_HOST_DEVICE constexpr typename Fold<B, S, X>::dim_type operator*(const Fold<B, S, X>& a,
                                                                      int n) {
    return typename Fold<B, S, X>::dim_type(a.get() * n);
}

template <typename B, int S, typename X>
SPIO_HOST_DEVICE constexpr typename Fold<B, S, X>::dim_type operator*(int n,
                                                                      const Fold<B, S, X>& a) {
    return typename Fold<B, S, X>::dim_type(n * a.get());
}

template <typename B, int S, typename X>
SPIO_HOST_DEVICE constexpr typename Fold<B, S, X>::dim_type operator/(const Fold<B, S, X>& a,
                                                                      int n) {
    return typename Fold<B, S, X>::dim_type(a.get() / n);
}

template <typename B, int S, typename X>
SPIO_HOST_DEVICE constexpr typename Fold<B, S, X>::dim_type operator%(const Fold<B, S, X>& a,
                                                                      int n) {
    return typename Fold<B, S, X>::dim_type(a.get() % n);
}

// Scaling by a float or double would truncate without a word (I(3) * 2.5 == I(7)): refused.

template <typename B, int S, typename X, typename F,
          detail::enable_if_t<detail::is_floating_point_v<F>, int> = 0>
SPIO_HOST_DEVICE void operator*(const Fold<B, S, X>&, F) = delete;

template <typename B, int S, typename X, typename F,
          detail::enable_if_t<detail::is_floating_point_v<F>, int> = 0>
SPIO_HOST_DEVICE void operator*(F, const Fold<B, S, X>&) = delete;

template <typename B, int S, typename X, typename F,
          detail::enable_if_t<detail::is_floating_point_v<F>, int> = 0>
SPIO_HOST_DEVICE void operator/(const Fold<B, S, X>&, F) = delete;

template <typename B, int S, typename X, typename F,
          detail::enable_if_t<detail::is_floating_point_v<F>, int> = 0>
SPIO_HOST_DEVICE void operator%(const Fold<B, S, X>&, F) = delete;

// Comparisons between folds of one base compare the values they stand for:
// K8(3) == K(24), K8(1) < K(9).

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr bool operator==(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot compare different dimensions: == needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs == u.rhs;
}

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr bool operator!=(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot compare different dimensions: != needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs != u.rhs;
}

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr bool operator<(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot compare different dimensions: < needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs < u.rhs;
}

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr bool operator<=(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot compare different dimensions: <= needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs <= u.rhs;
}

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr bool operator>(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot compare different dimensions: > needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs > u.rhs;
}

template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr bool operator>=(const Fold<B1, S1, X1>& a, const Fold<B2, S2, X2>& b) {
    static_assert(detail::is_same_v<B1, B2>,
                  "cannot compare different dimensions: >= needs two folds of one base dimension");
    const detail::CommonUnits u = detail::common_units(a, b);
    return u.lhs >= u.rhs;
}

}  // namespace spio
