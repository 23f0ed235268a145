// Cursor: a position in a tensor, moved by typed subscripts; a pointer that knows its layout.
//
//     auto b = a[I(2)][J(2)];     // Tensor::operator[] returns a Cursor
//     b.step(I(1));               // move in place
//     *b, b->x, b.get()           // the element, a member of it, its address
//     a[I(1)][J(2)] == a[J(2)][I(1)]  // cursors compare as their addresses do
//     auto c = b[J(3)];           // a moved copy
//     auto tile = C_tile(b.get()) // another tensor view starting here
//
// Subscripts are position-free (b[I(1)][J(2)] is b[J(2)][I(1)]) and accumulate in logical
// units before folding: for A = K8(4) x I(4) x K(8), a[K(7)][K(5)] is a[K8(1)][K(4)]. The rules
// that keep that cheap:
//   - a subscript of a whole number of a base's coarsest fold moves the position at once
//     (always so for a base the tensor lists once, unfolded: plain index arithmetic);
//   - a finer subscript of a folded base adds to that base's carried logical offset, which
//     get() folds into digits (dim_info.h). Only folded bases carry an offset.
// A lone dimension must be one the tensor has (a fold of one of its base dimensions); the
// entries of Coordinates or a CompoundIndex project: those the tensor lacks are ignored, but at
// least one must be the tensor's.
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"  // TypeList, IndexSeq, index positions
#include "spio/dim.h"          // is_fold_v: lone-dimension subscripts
#include "spio/coordinates.h"  // Coordinates, has_coordinates_v: projected subscripts
#include "spio/dim_info.h"     // DimInfo, Layout: where a subscript lands

namespace spio {

template <typename DataType, typename... Infos>
class Tensor;

namespace detail {

// folded_bases_t<Infos...>: the bases that need a carried logical offset, in order.
template <typename Bases, typename... Infos>
struct FoldedBases;

template <typename... Bs, typename... Infos>
struct FoldedBases<TypeList<Bs...>, Infos...> {
    using type = concat_t<TypeList<>, conditional_t<Layout<Infos...>::template is_folded<Bs>(),
                                                    TypeList<Bs>, TypeList<>>...>;
};

template <typename... Infos>
using folded_bases_t = typename FoldedBases<typename Layout<Infos...>::bases, Infos...>::type;

// The carried logical offsets of a cursor, one per folded base in units of that base; empty
// (and free, as a base class) when no base is folded. N is unsigned, as an array bound is.
template <unsigned N>
struct CarriedOffsets {
    int offsets[N] = {};
};

template <>
struct CarriedOffsets<0> {};

// Always false: the static_assert of a subscript the tensor lacks, named so that the compiler
// reports "tensor_has_dimension<WARP_J> evaluates to false".
template <typename D>
inline constexpr bool tensor_has_dimension = false;

// Whether coordinates of Ds share a base dimension with the tensor of layout L: a projected
// subscript that shares none applies nothing, which is a wrong index rather than a no-op.
template <typename L, typename... Ds>
inline constexpr bool tensor_shares_dimension =
    (L::template has_base<typename Ds::base_type>() || ...);

// The position of base B in a TypeList of bases.
template <typename B, typename... Bs>
SPIO_HOST_DEVICE constexpr int base_position(TypeList<Bs...>) {
    return index_of<B, Bs...>();
}

}  // namespace detail

/// A typed position in a tensor with element type DataType and dimensions Infos.
template <typename DataType, typename... Infos>
class Cursor : private detail::CarriedOffsets<detail::folded_bases_t<Infos...>::size> {
    using Layout = detail::Layout<Infos...>;
    using FoldedBases = detail::folded_bases_t<Infos...>;

public:
    using data_type = DataType;
    using tensor_type = Tensor<DataType, Infos...>;

    constexpr Cursor() = default;

    /// A cursor at the origin of the tensor stored at data.
    SPIO_HOST_DEVICE explicit constexpr Cursor(DataType* data) : _data(data) {}

    /// The address of the element here.
    SPIO_HOST_DEVICE constexpr DataType* get() const {
        return _data + (_offset + carried_offset());
    }

    SPIO_HOST_DEVICE constexpr DataType& operator*() const { return *get(); }

    SPIO_HOST_DEVICE constexpr DataType* operator->() const { return get(); }

    /// A copy moved by subscript s (a dimension, a fold, Coordinates, a CompoundIndex, ...).
    template <typename Subscript>
    SPIO_HOST_DEVICE constexpr Cursor operator[](const Subscript& s) const {
        Cursor moved = *this;
        moved.apply<false>(s);
        return moved;
    }

    /// Move this cursor by subscript s, in place.
    template <typename Subscript>
    SPIO_HOST_DEVICE constexpr Cursor& step(const Subscript& s) {
        apply<true>(s);
        return *this;
    }

    /// Whether two cursors are at one element, as pointers compare: a[K(7)][K(5)] ==
    /// a[K8(1)][K(4)], though one carries its K in a logical offset and the other does not.
    SPIO_HOST_DEVICE friend constexpr bool operator==(const Cursor& a, const Cursor& b) {
        return a.get() == b.get();
    }

    SPIO_HOST_DEVICE friend constexpr bool operator!=(const Cursor& a, const Cursor& b) {
        return a.get() != b.get();
    }

private:
    // InPlace: whether the move is a subscript, which adds to the int offset (so a[i][k] costs
    // one 32-bit sum and one address computation, as a hand-written a[i * 32 + k] does), or a
    // step, which folds the offset into the pointer and moves the pointer (so the pointer is
    // the loop's one induction variable, as a hand-written p += 128 is).
    template <bool InPlace, typename Subscript>
    SPIO_HOST_DEVICE constexpr void apply(const Subscript& s) {
        if constexpr (detail::is_fold_v<Subscript> &&
                      Layout::template has_base<detail::base_of_t<Subscript>>()) {
            // Case: a lone dimension of the tensor.
            move<InPlace>(s);
        } else if constexpr (detail::is_fold_v<Subscript>) {
            // Case: a lone dimension the tensor lacks.
            static_assert(detail::tensor_has_dimension<Subscript>,
                          "tensor has no dimension of this subscript: a lone dimension "
                          "subscript must be (a fold of) one of the tensor's dimensions");
        } else if constexpr (detail::has_coordinates_v<Subscript>) {
            // Case: coordinates, a compound index, ...: apply the dimensions the tensor has.
            project<InPlace>(s.coordinates());
        } else {
            // Case: anything else, such as an int.
            static_assert(detail::always_false<Subscript>,
                          "a tensor subscript must be a dimension, a fold, coordinates or a "
                          "compound index (an int has no dimension)");
        }
    }

    template <bool InPlace, typename D>
    SPIO_HOST_DEVICE constexpr void move(const D& d) {
        using B = typename D::base_type;
        constexpr int coarsest = Layout::template coarsest_fold_stride<B>();
        if constexpr (D::stride % coarsest == 0) {
            // Case: whole units of B's coarsest fold (any subscript of an unfolded base): no
            // carry can arise, so move the position directly.
            const int delta =
                d.get() * (D::stride / coarsest * Layout::template coarsest_stride<B>());
            if constexpr (InPlace) {
                // Case: a step: the pointer carries the whole position.
                _data += _offset + delta;
                _offset = 0;
            } else {
                // Case: a subscript: add to the offset.
                _offset += delta;
            }
        } else {
            // Case: finer than B's coarsest fold: accumulate in units of B; get() folds.
            carried<B>() += d.get() * D::stride;
        }
    }

    template <bool InPlace, typename... Ds>
    SPIO_HOST_DEVICE constexpr void project(const Coordinates<Ds...>& coordinates) {
        static_assert(detail::tensor_shares_dimension<Layout, Ds...>,
                      "subscript coordinates share no dimension with the tensor: a projected "
                      "subscript (coordinates, a compound index, ...) needs at least one of "
                      "the tensor's dimensions");
        project<InPlace>(coordinates, detail::make_index_seq<sizeof...(Ds)>());
    }

    template <bool InPlace, typename... Ds, int... Is>
    SPIO_HOST_DEVICE constexpr void project(const Coordinates<Ds...>& coordinates,
                                            detail::IndexSeq<Is...>) {
        (move_if_present<InPlace>(coordinates.template entry<Is>()), ...);
    }

    template <bool InPlace, typename D>
    SPIO_HOST_DEVICE constexpr void move_if_present(const D& d) {
        if constexpr (Layout::template has_base<typename D::base_type>()) {
            // Case: a dimension the tensor has.
            move<InPlace>(d);
        }
        // Otherwise: a dimension the tensor lacks is ignored (projection).
    }

    template <typename B>
    SPIO_HOST_DEVICE constexpr int& carried() {
        return this->offsets[detail::base_position<B>(FoldedBases())];
    }

    template <typename B>
    SPIO_HOST_DEVICE constexpr int carried_value() const {
        return this->offsets[detail::base_position<B>(FoldedBases())];
    }

    SPIO_HOST_DEVICE constexpr int carried_offset() const { return carried_offset(FoldedBases()); }

    template <typename... Bs>
    SPIO_HOST_DEVICE constexpr int carried_offset(detail::TypeList<Bs...>) const {
        return (0 + ... + Layout::template folded_offset<Bs>(carried_value<Bs>()));
    }

    // The position is _data + _offset + the folded carried offsets (see apply()).
    DataType* _data = nullptr;
    int _offset = 0;
};

}  // namespace spio
