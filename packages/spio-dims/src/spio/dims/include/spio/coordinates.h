// Coordinates: a bundle of dimension values, combined by dimensional projection.
//
//     auto origin = spio::make_coordinates(I(12), J(60));
//     auto world = origin + K(3);         // (I(12), J(60), K(3)): K passes through
//     origin + make_coordinates(I(1))     // (I(13), J(60)): I values add
//     world < a.extents()                 // only the dimensions both sides have are compared
//     world.get<J>() == J(60)
//
// The projection rules, which tensors follow too:
//   - arithmetic (+) adds the entries that share a base dimension and passes the others
//     through;
//   - comparison tests every base dimension the two sides share and needs at least one;
//   - subscripting a tensor applies the dimensions it has and ignores the others.
//
// Entries may be folds, and a base may appear more than once (K8 and K, as range(tensor) yields
// for a tensor folded that way): a base's value is then the sum of its entries, K8(1), K(4)
// standing for K(12). A Fold or a CompoundIndex takes part in these operators as coordinates
// of its own.
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"  // TypeList, IndexSeq, type_at_t, enable_if_t, void_t
#include "spio/dim.h"          // Fold, is_fold_v, fold_of_t: the entries and their units

namespace spio {

namespace detail {

// One entry of a Coordinates, tagged by position so that two entries of one type stay apart.
template <int Index, typename D>
struct CoordinateEntry {
    D value;
};

template <typename Seq, typename... Ds>
struct CoordinateEntries;

template <>
struct CoordinateEntries<IndexSeq<>> {};

template <int... Is, typename... Ds>
struct CoordinateEntries<IndexSeq<Is...>, Ds...> : CoordinateEntry<Is, Ds>... {
    constexpr CoordinateEntries() = default;
    SPIO_HOST_DEVICE constexpr explicit CoordinateEntries(const Ds&... ds)
        : CoordinateEntry<Is, Ds>{ds}... {}
};

// index_of_v<D, Ds...>: the position of type D among Ds, or -1.
template <typename D, typename... Ds>
SPIO_HOST_DEVICE constexpr int index_of() {
    int index = -1;
    int position = 0;
    ((index = (index < 0 && is_same_v<D, Ds>) ? position : index, ++position), ...);
    return index;
}

template <typename D, typename... Ds>
inline constexpr int index_of_v = index_of<D, Ds...>();

// Always false: the static_assert of get<D>() for a D the coordinates lack, named so that the
// compiler reports "coordinates_have_dimension<K> evaluates to false".
template <typename D>
inline constexpr bool coordinates_have_dimension = false;

// has_base_v<B, Ds...>: whether some D among Ds folds the base dimension B.
template <typename B, typename... Ds>
inline constexpr bool has_base_v = (is_same_v<typename Ds::base_type, B> || ...);

// The position of the first entry of base B among Ds, or -1.
template <typename B, typename... Ds>
SPIO_HOST_DEVICE constexpr int first_index_of_base() {
    return index_of<B, typename Ds::base_type...>();
}

// The unit in which every entry of base B among Ds is a whole count: the gcd of their strides
// (0 when there is none, which gcd(0, s) == s absorbs).
template <typename B, typename... Ds>
SPIO_HOST_DEVICE constexpr int base_unit() {
    int unit = 0;
    ((unit = is_same_v<typename Ds::base_type, B> ? gcd(unit, Ds::stride) : unit), ...);
    return unit;
}

}  // namespace detail

/// Values of several dimensions, in the order given. Make them with make_coordinates(...).
///
/// get<D>() returns the entry of type D; for another fold of a base the coordinates hold, it
/// returns the sum of that base's entries counted in units of D. For (K8(1), I(2), K(4)):
/// get<K8>() == K8(1) and get<K>() == K(4) (entries), get<K16>() == K16(0) (12 / 16, rounded
/// toward zero); the whole logical value is sum_of_base<K, 1>() == 12.
template <typename... Ds>
class Coordinates : detail::CoordinateEntries<detail::make_index_seq<sizeof...(Ds)>, Ds...> {
    static_assert((detail::is_fold_v<Ds> && ...),
                  "coordinates hold dimensions: every entry must be a dimension or a fold");

    using Entries = detail::CoordinateEntries<detail::make_index_seq<sizeof...(Ds)>, Ds...>;

public:
    constexpr Coordinates() = default;

    template <int N = sizeof...(Ds), detail::enable_if_t<(N > 0), int> = 0>
    SPIO_HOST_DEVICE constexpr explicit Coordinates(const Ds&... ds) : Entries(ds...) {}

    /// The entry at position Index, for code generic over the entry list.
    template <int Index>
    SPIO_HOST_DEVICE constexpr const detail::type_at_t<Index, Ds...>& entry() const {
        using Entry = detail::CoordinateEntry<Index, detail::type_at_t<Index, Ds...>>;
        return static_cast<const Entry&>(*this).value;
    }

    /// The value of dimension D (see the class comment).
    template <typename D>
    SPIO_HOST_DEVICE constexpr D get() const {
        static_assert(detail::is_fold_v<D>, "get<D>() needs a dimension or a fold D");
        using B = typename D::base_type;
        constexpr int index = detail::index_of_v<D, Ds...>;
        if constexpr (index >= 0) {
            // Case: D is an entry: return it as stored.
            return entry<index>();
        } else if constexpr (!detail::has_base_v<B, Ds...>) {
            // Case: no entry folds D's base.
            static_assert(detail::coordinates_have_dimension<D>,
                          "coordinates have no dimension of this base: get<D>() needs an entry "
                          "of D or of another fold of D's base dimension");
            return D();
        } else {
            // Case: another fold of a base the coordinates hold: sum the base's entries and
            // count the sum in units of D.
            constexpr int unit = detail::base_unit<B, Ds...>();
            return D(sum_of_base<B, unit>() * unit / D::stride);
        }
    }

    /// Coordinates are their own coordinates (the projection operators accept anything that
    /// has coordinates()).
    SPIO_HOST_DEVICE constexpr const Coordinates& coordinates() const { return *this; }

    /// The sum of the entries of base B, counted in units of Unit (a divisor of their
    /// strides): for (K8(1), I(2), K(4)), sum_of_base<K, 1>() == 12.
    template <typename B, int Unit>
    SPIO_HOST_DEVICE constexpr int sum_of_base() const {
        return sum_of_entries<B, Unit>(detail::make_index_seq<sizeof...(Ds)>());
    }

private:
    template <typename B, int Unit, int... Is>
    SPIO_HOST_DEVICE constexpr int sum_of_entries(detail::IndexSeq<Is...>) const {
        return (0 + ... + entry_in_units<B, Unit, Is>());
    }

    template <typename B, int Unit, int Index>
    SPIO_HOST_DEVICE constexpr int entry_in_units() const {
        using D = detail::type_at_t<Index, Ds...>;
        if constexpr (detail::is_same_v<typename D::base_type, B>) {
            // Case: an entry of base B: count it in units of Unit.
            return entry<Index>().get() * (D::stride / Unit);
        } else {
            // Case: an entry of another base: contributes nothing.
            return 0;
        }
    }
};

/// Coordinates of the given dimension values, in the given order:
/// make_coordinates(I(2), J(3)) is Coordinates<I, J>.
template <typename... Ds>
SPIO_HOST_DEVICE constexpr Coordinates<Ds...> make_coordinates(const Ds&... ds) {
    return Coordinates<Ds...>(ds...);
}

namespace detail {

// HasCoordinates<T>: whether T offers coordinates() (Coordinates, CompoundIndex,
// CheckerboardIndex, ...).
template <typename T, typename = void>
struct HasCoordinates {
    static constexpr bool value = false;
};

template <typename T>
struct HasCoordinates<T, void_t<decltype(declval<const T&>().coordinates())>> {
    static constexpr bool value = true;
};

template <typename T>
inline constexpr bool has_coordinates_v = HasCoordinates<T>::value;

// The projection operators take two operands that are folds or have coordinates, at least one
// of them not a fold (two folds use the fold operators of dim.h).
template <typename L, typename R>
inline constexpr bool is_projection_v =
    (is_fold_v<L> || has_coordinates_v<L>) && (is_fold_v<R> || has_coordinates_v<R>) &&
    !(is_fold_v<L> && is_fold_v<R>);

// An operand of a projection operator as Coordinates: a fold as a one-entry list.
template <typename T>
SPIO_HOST_DEVICE constexpr auto as_coordinates(const T& x) {
    if constexpr (is_fold_v<T>) {
        // Case: a lone dimension.
        return Coordinates<typename T::dim_type>(typename T::dim_type(x.get()));
    } else {
        // Case: anything with coordinates().
        return x.coordinates();
    }
}

// --- Addition. The result lists, in order: each left entry whose base the right side lacks;
// at the first left entry of a shared base, one entry holding the sum of all that base's
// entries on both sides; then each right entry whose base the left side lacks. A sum counts in
// the gcd of its entries' strides and has the type of the first of them (left side first) that
// counts in that unit, else the anonymous fold by it: (K8(1), I(2), K(4)) + K16(1) holds K(28).
// Each result entry is described by a slot type, and the slots are then evaluated.

template <int Index>
struct FromLeft {};

template <int Index>
struct FromRight {};

// The sum of base B on both sides, as a D (whose stride is the common unit).
template <typename B, typename D>
struct SumOfBase {};

// The first of Ds that folds B by exactly Unit, or void.
template <typename B, int Unit, typename... Ds>
struct FirstWithStride {
    using type = void;
};

template <typename B, int Unit, typename D, typename... Ds>
struct FirstWithStride<B, Unit, D, Ds...> {
    using type =
        conditional_t<is_same_v<typename D::base_type, B> && D::stride == Unit,
                      typename D::dim_type, typename FirstWithStride<B, Unit, Ds...>::type>;
};

template <int Index, typename LList, typename RList>
struct LeftSlot;

template <int Index, typename... Ls, typename... Rs>
struct LeftSlot<Index, TypeList<Ls...>, TypeList<Rs...>> {
    using B = typename type_at_t<Index, Ls...>::base_type;
    static constexpr int unit = gcd(base_unit<B, Ls...>(), base_unit<B, Rs...>());
    using LeftUnit = typename FirstWithStride<B, unit, Ls...>::type;
    using RightUnit = typename FirstWithStride<B, unit, Rs...>::type;
    using SumType =
        conditional_t<!is_same_v<LeftUnit, void>, LeftUnit,
                      conditional_t<!is_same_v<RightUnit, void>, RightUnit, fold_of_t<B, unit>>>;
    using type = conditional_t<!has_base_v<B, Rs...>, TypeList<FromLeft<Index>>,
                               conditional_t<first_index_of_base<B, Ls...>() == Index,
                                             TypeList<SumOfBase<B, SumType>>, TypeList<>>>;
};

template <int Index, typename LList, typename RList>
struct RightSlot;

template <int Index, typename... Ls, typename... Rs>
struct RightSlot<Index, TypeList<Ls...>, TypeList<Rs...>> {
    using B = typename type_at_t<Index, Rs...>::base_type;
    using type = conditional_t<has_base_v<B, Ls...>, TypeList<>, TypeList<FromRight<Index>>>;
};

template <typename LList, typename RList, typename LSeq, typename RSeq>
struct SumSlots;

template <typename... Ls, typename... Rs, int... Is, int... Js>
struct SumSlots<TypeList<Ls...>, TypeList<Rs...>, IndexSeq<Is...>, IndexSeq<Js...>> {
    using type =
        concat_t<TypeList<>, typename LeftSlot<Is, TypeList<Ls...>, TypeList<Rs...>>::type...,
                 typename RightSlot<Js, TypeList<Ls...>, TypeList<Rs...>>::type...>;
};

template <typename Slot, typename LC, typename RC>
struct SlotDim;

template <int Index, typename... Ls, typename RC>
struct SlotDim<FromLeft<Index>, Coordinates<Ls...>, RC> {
    using type = type_at_t<Index, Ls...>;
};

template <int Index, typename LC, typename... Rs>
struct SlotDim<FromRight<Index>, LC, Coordinates<Rs...>> {
    using type = type_at_t<Index, Rs...>;
};

template <typename B, typename D, typename LC, typename RC>
struct SlotDim<SumOfBase<B, D>, LC, RC> {
    using type = D;
};

template <int Index, typename LC, typename RC>
SPIO_HOST_DEVICE constexpr auto slot_value(FromLeft<Index>, const LC& l, const RC&) {
    return l.template entry<Index>();
}

template <int Index, typename LC, typename RC>
SPIO_HOST_DEVICE constexpr auto slot_value(FromRight<Index>, const LC&, const RC& r) {
    return r.template entry<Index>();
}

template <typename B, typename D, typename... Ls, typename... Rs>
SPIO_HOST_DEVICE constexpr D slot_value(SumOfBase<B, D>, const Coordinates<Ls...>& l,
                                        const Coordinates<Rs...>& r) {
    return D(l.template sum_of_base<B, D::stride>() + r.template sum_of_base<B, D::stride>());
}

template <typename... Slots, typename LC, typename RC>
SPIO_HOST_DEVICE constexpr auto evaluate_slots(TypeList<Slots...>, const LC& l, const RC& r) {
    return Coordinates<typename SlotDim<Slots, LC, RC>::type...>(slot_value(Slots(), l, r)...);
}

template <typename... Ls, typename... Rs>
SPIO_HOST_DEVICE constexpr auto add_coordinates(const Coordinates<Ls...>& l,
                                                const Coordinates<Rs...>& r) {
    using Slots = typename SumSlots<TypeList<Ls...>, TypeList<Rs...>, make_index_seq<sizeof...(Ls)>,
                                    make_index_seq<sizeof...(Rs)>>::type;
    return evaluate_slots(Slots(), l, r);
}

// --- Comparison: every base dimension both sides hold must satisfy Op, each base tested once
// (at its first left entry) on the sums of its entries.

struct Equal {
    SPIO_HOST_DEVICE static constexpr bool apply(int a, int b) { return a == b; }
};
struct Less {
    SPIO_HOST_DEVICE static constexpr bool apply(int a, int b) { return a < b; }
};
struct LessEqual {
    SPIO_HOST_DEVICE static constexpr bool apply(int a, int b) { return a <= b; }
};
struct Greater {
    SPIO_HOST_DEVICE static constexpr bool apply(int a, int b) { return a > b; }
};
struct GreaterEqual {
    SPIO_HOST_DEVICE static constexpr bool apply(int a, int b) { return a >= b; }
};

template <typename Op, int Index, typename... Ls, typename... Rs>
SPIO_HOST_DEVICE constexpr bool compare_base_at(const Coordinates<Ls...>& l,
                                                const Coordinates<Rs...>& r) {
    using B = typename type_at_t<Index, Ls...>::base_type;
    if constexpr (has_base_v<B, Rs...> && first_index_of_base<B, Ls...>() == Index) {
        // Case: the first left entry of a shared base: compare the base's sums.
        constexpr int unit = gcd(base_unit<B, Ls...>(), base_unit<B, Rs...>());
        return Op::apply(l.template sum_of_base<B, unit>(), r.template sum_of_base<B, unit>());
    } else {
        // Case: a base the right side lacks, or one already compared.
        return true;
    }
}

template <typename Op, typename... Ls, typename... Rs, int... Is>
SPIO_HOST_DEVICE constexpr bool compare_shared(const Coordinates<Ls...>& l,
                                               const Coordinates<Rs...>& r, IndexSeq<Is...>) {
    static_assert((has_base_v<typename Ls::base_type, Rs...> || ...),
                  "coordinates share no dimension: a projected comparison needs at least one "
                  "base dimension on both sides");
    return (true && ... && compare_base_at<Op, Is>(l, r));
}

template <typename Op, typename... Ls, typename... Rs>
SPIO_HOST_DEVICE constexpr bool compare_coordinates(const Coordinates<Ls...>& l,
                                                    const Coordinates<Rs...>& r) {
    return compare_shared<Op>(l, r, make_index_seq<sizeof...(Ls)>());
}

template <typename Op, typename L, typename R>
SPIO_HOST_DEVICE constexpr bool compare_projected(const L& l, const R& r) {
    return compare_coordinates<Op>(as_coordinates(l), as_coordinates(r));
}

}  // namespace detail

/// Projected sum: entries of a shared base add, the others pass through.
/// (I(12), J(60)) + (I(1), J(2), K(3)) == (I(13), J(62), K(3)).
template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr auto operator+(const L& l, const R& r) {
    return detail::add_coordinates(detail::as_coordinates(l), detail::as_coordinates(r));
}

/// Projected comparisons: true when the relation holds for every base dimension both sides
/// have: (I(3), J(70), K(5)) < (I(16), K(32)) ignores J and holds. != is the negation of ==.
template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr bool operator==(const L& l, const R& r) {
    return detail::compare_projected<detail::Equal>(l, r);
}

template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr bool operator!=(const L& l, const R& r) {
    return !detail::compare_projected<detail::Equal>(l, r);
}

template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr bool operator<(const L& l, const R& r) {
    return detail::compare_projected<detail::Less>(l, r);
}

template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr bool operator<=(const L& l, const R& r) {
    return detail::compare_projected<detail::LessEqual>(l, r);
}

template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr bool operator>(const L& l, const R& r) {
    return detail::compare_projected<detail::Greater>(l, r);
}

template <typename L, typename R, detail::enable_if_t<detail::is_projection_v<L, R>, int> = 0>
SPIO_HOST_DEVICE constexpr bool operator>=(const L& l, const R& r) {
    return detail::compare_projected<detail::GreaterEqual>(l, r);
}

}  // namespace spio
