// Tensor: a pointer with a compile-time typed layout.
//
//     using A = spio::Tensor<float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;
//     A::data_type a_data[A::storage_size()];   // 1 + 15 * 32 + 31 * 1 elements
//     auto a = A(a_data);
//     a[I(2)][K(4)].get() == a[K(4)][I(2)].get()  // position-free subscripts
//     a[make_coordinates(I(2), J(3), K(4))]       // projection: J is ignored
//     A::size<I>() == I(16);  a.extents() == make_coordinates(I(16), K(32))
//
// Subscripting returns a Cursor (cursor.h), which holds the position. Sizes of a folded base
// count the whole logical dimension: for K8(4) x I(4) x K(8), size<K>() == K(32).
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"  // TypeList, enable_if_t, is_same_v
#include "spio/dim.h"          // is_fold_v: what size<D>() accepts
#include "spio/coordinates.h"  // Coordinates: extents()
#include "spio/dim_info.h"     // DimInfo, Layout: sizes, extents, storage
#include "spio/cursor.h"       // Cursor: what subscripting returns

namespace spio {

/// A view of DataType elements at a pointer, laid out by DimInfo<D, Size, Stride>... (outermost
/// first). DataType may be const (a read-only view) or a vector or fragment type.
template <typename DataType, typename... Infos>
class Tensor {
    static_assert((detail::is_dim_info_v<Infos> && ...),
                  "Tensor<T, Dims...>: each dimension must be a spio::DimInfo<D, Size, Stride>");
    static_assert(detail::FoldsNest<(detail::is_dim_info_v<Infos> && ...), Infos...>::value,
                  "tensor folds of one dimension must have distinct strides that divide each "
                  "other (K8 with K, K16 with K8), so a logical coordinate has one set of digits");

    using Layout = detail::Layout<Infos...>;

public:
    using data_type = DataType;
    using cursor_type = Cursor<DataType, Infos...>;

    constexpr Tensor() = default;

    /// The tensor stored at data.
    SPIO_HOST_DEVICE explicit constexpr Tensor(DataType* data) : _data(data) {}

    /// A read-only view of a tensor of the same layout: Tensor<const T, ...> from Tensor<T, ...>.
    template <typename Other, detail::enable_if_t<detail::is_same_v<const Other, DataType> &&
                                                      !detail::is_same_v<Other, DataType>,
                                                  int> = 0>
    SPIO_HOST_DEVICE constexpr Tensor(const Tensor<Other, Infos...>& other) : _data(other.get()) {}

    /// The address of the first element.
    SPIO_HOST_DEVICE constexpr DataType* get() const { return _data; }

    /// The element at the origin.
    SPIO_HOST_DEVICE constexpr DataType& operator*() const { return *_data; }

    /// A cursor moved by subscript s (a dimension, a fold, Coordinates, a CompoundIndex, ...).
    template <typename Subscript>
    SPIO_HOST_DEVICE constexpr cursor_type operator[](const Subscript& s) const {
        return cursor_type(_data)[s];
    }

    /// A cursor at the origin.
    SPIO_HOST_DEVICE constexpr cursor_type cursor() const { return cursor_type(_data); }

    /// The number of elements the layout spans: 1 + sum((size - 1) * stride).
    SPIO_HOST_DEVICE static constexpr int storage_size() { return Layout::storage_size(); }

    /// The number of positions: the product of the sizes.
    SPIO_HOST_DEVICE static constexpr int size() { return Layout::num_elements(); }

    /// The size of dimension D, counted in units of D:
    ///   - a base dimension: its whole logical extent (K8(4) x I(4) x K(8): size<K>() == K(32));
    ///   - a listed fold: its listed size (size<K8>() == K8(4));
    ///   - another fold of a base the tensor has: the logical extent in its units
    ///     (size<K16>() == K16(2)).
    template <typename D>
    SPIO_HOST_DEVICE static constexpr D size() {
        static_assert(detail::is_fold_v<D>, "size<D>() needs a dimension or a fold D");
        using B = detail::base_of_t<D>;
        constexpr int index = Layout::template index_of<D>();
        if constexpr (!Layout::template has_base<B>()) {
            // Case: a dimension the tensor lacks.
            static_assert(detail::tensor_has_dimension<D>,
                          "tensor has no dimension of this base: size<D>() needs (a fold of) "
                          "one of the tensor's dimensions");
            return D();
        } else if constexpr (detail::is_same_v<D, B>) {
            // Case: a base dimension: its logical extent.
            return D(Layout::template logical_extent<B>());
        } else if constexpr (index >= 0) {
            // Case: a listed fold: its size.
            return D(detail::type_at_t<index, Infos...>::size);
        } else {
            // Case: another fold of one of the tensor's bases.
            return D(Layout::template logical_extent<B>() / D::stride);
        }
    }

    /// The logical extent of each base dimension, in order of first appearance:
    /// K8(4) x I(4) x K(8) -> (K(32), I(4)).
    SPIO_HOST_DEVICE static constexpr auto extents() { return extents(typename Layout::bases()); }

private:
    template <typename... Bs>
    SPIO_HOST_DEVICE static constexpr Coordinates<Bs...> extents(detail::TypeList<Bs...>) {
        return Coordinates<Bs...>(Bs(Layout::template logical_extent<Bs>())...);
    }

    DataType* _data = nullptr;
};

}  // namespace spio
