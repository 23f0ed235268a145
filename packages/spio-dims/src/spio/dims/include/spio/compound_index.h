// CompoundIndex: a linear index folded into typed coordinates.
//
//     using BlockIndex =
//         spio::CompoundIndex<spio::DimInfo<I16, 32, 32>, spio::DimInfo<J16, 32, 1>>;
//     auto block = BlockIndex(70);   // 70 = 2 * 32 + 6
//     block.get<I16>() == I16(2);    block.get<J16>() == J16(6);
//     BlockIndex::size() == 1024;
//     a[block]                       // subscript: I16(2), J16(6), projected onto a
//     block.get<I>() == I(32)        // another fold of a listed base: the sum, re-folded
//
// Entry D with DimInfo<D, Size, Stride> takes the digit offset / Stride % Size; the outermost
// entry (the largest Stride) takes the whole quotient offset / Stride, so an index past size()
// keeps counting there.
//
// CompoundIndexFrom<Source, ...> is a CompoundIndex that device code default-constructs from a
// CUDA built-in (Source = ThreadIdxX ... BlockIdxZ):
//
//     using ThreadIndex = spio::CompoundIndexFrom<spio::ThreadIdxX, spio::DimInfo<I, 16, 16>,
//                                                 spio::DimInfo<J, 16, 1>>;
//     ThreadIndex thread;                 // from threadIdx.x (CUDA only)
//     ThreadIndex thread(5);              // from any int, host or device
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE, SPIO_DEVICE, SPIO_CUDA
#include "spio/detail/meta.h"  // IndexSeq, type_at_t
#include "spio/dim.h"          // is_fold_v: what get<D>() accepts
#include "spio/coordinates.h"  // Coordinates: what an index converts to
#include "spio/dim_info.h"     // DimInfo, Layout: digits and size

namespace spio {

namespace detail {

// Always false: the static_assert of get<D>() for a D the index lacks, named so that the
// compiler reports "compound_index_has_dimension<K> evaluates to false".
template <typename D>
inline constexpr bool compound_index_has_dimension = false;

}  // namespace detail

/// A linear index over the dimensions Infos (DimInfo<D, Size, Stride>..., outermost first).
template <typename... Infos>
class CompoundIndex {
    static_assert((detail::is_dim_info_v<Infos> && ...),
                  "CompoundIndex<Dims...>: each dimension must be a spio::DimInfo<D, Size, "
                  "Stride>");

    using Layout = detail::Layout<Infos...>;

public:
    using coordinates_type = Coordinates<typename Infos::dim_type...>;

    constexpr CompoundIndex() = default;

    SPIO_HOST_DEVICE explicit constexpr CompoundIndex(int offset) : _offset(offset) {}

    /// The number of positions: the product of the sizes.
    SPIO_HOST_DEVICE static constexpr int size() { return Layout::num_elements(); }

    /// The linear index.
    SPIO_HOST_DEVICE constexpr int get() const { return _offset; }

    /// The value of dimension D: a listed D's digit, or for another fold of a listed base the
    /// sum of that base's digits counted in units of D.
    template <typename D>
    SPIO_HOST_DEVICE constexpr D get() const {
        static_assert(detail::is_fold_v<D>, "get<D>() needs a dimension or a fold D");
        constexpr int index = Layout::template index_of<D>();
        if constexpr (index >= 0) {
            // Case: a listed dimension: its digit.
            return D(Layout::template digit<index>(_offset));
        } else if constexpr (!Layout::template has_base<detail::base_of_t<D>>()) {
            // Case: a dimension the index lacks.
            static_assert(detail::compound_index_has_dimension<D>,
                          "compound index has no dimension of this base: get<D>() needs (a "
                          "fold of) one of the index's dimensions");
            return D();
        } else {
            // Case: another fold of a listed base.
            return coordinates().template get<D>();
        }
    }

    /// Every listed dimension's digit, in the listed order.
    SPIO_HOST_DEVICE constexpr coordinates_type coordinates() const {
        return coordinates(detail::make_index_seq<sizeof...(Infos)>());
    }

    SPIO_HOST_DEVICE constexpr operator coordinates_type() const { return coordinates(); }

private:
    template <int... Is>
    SPIO_HOST_DEVICE constexpr coordinates_type coordinates(detail::IndexSeq<Is...>) const {
        return coordinates_type(typename Infos::dim_type(Layout::template digit<Is>(_offset))...);
    }

    int _offset = 0;
};

// The CUDA built-ins a CompoundIndexFrom reads; get() exists only when compiling CUDA.

struct ThreadIdxX {
#if SPIO_CUDA
    SPIO_DEVICE static int get() { return static_cast<int>(threadIdx.x); }
#endif
};

struct ThreadIdxY {
#if SPIO_CUDA
    SPIO_DEVICE static int get() { return static_cast<int>(threadIdx.y); }
#endif
};

struct ThreadIdxZ {
#if SPIO_CUDA
    SPIO_DEVICE static int get() { return static_cast<int>(threadIdx.z); }
#endif
};

struct BlockIdxX {
#if SPIO_CUDA
    SPIO_DEVICE static int get() { return static_cast<int>(blockIdx.x); }
#endif
};

struct BlockIdxY {
#if SPIO_CUDA
    SPIO_DEVICE static int get() { return static_cast<int>(blockIdx.y); }
#endif
};

struct BlockIdxZ {
#if SPIO_CUDA
    SPIO_DEVICE static int get() { return static_cast<int>(blockIdx.z); }
#endif
};

/// A CompoundIndex that device code default-constructs from Source::get() (threadIdx.x for
/// ThreadIdxX, ...). Host code has no default constructor, only the int one.
template <typename Source, typename... Infos>
class CompoundIndexFrom : public CompoundIndex<Infos...> {
public:
#if SPIO_CUDA
    SPIO_DEVICE CompoundIndexFrom() : CompoundIndex<Infos...>(Source::get()) {}
#endif

    SPIO_HOST_DEVICE explicit constexpr CompoundIndexFrom(int offset)
        : CompoundIndex<Infos...>(offset) {}
};

}  // namespace spio
