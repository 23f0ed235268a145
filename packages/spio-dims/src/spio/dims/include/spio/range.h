// range(): typed counted loops.
//
//     for (auto k : range(K(32))) ...            // k is K(0) ... K(31)
//     for (auto k : range(K(4), K(32))) ...      // K(4) ... K(31)
//     for (auto k : range(K(5), K(2))) ...       // nothing: an end before the begin is empty
//     for (auto k : range(a.size<K>())) ...      // over a tensor's logical K
//     for (auto idx : range(c_tile)) ...         // Coordinates of every element of c_tile
//
// Each range is an int counter from begin to end, so a range-for compiles to the plain counted
// loop (and unrolls like one when the bounds are constants). range(tensor) yields one entry per
// tensor dimension, in the listed order with the last fastest: Coordinates<I, J> for I x J;
// Coordinates<K8, I, K> for K8 x I x K. The entries are digits of the counter, computed like
// a CompoundIndex over the sizes (independent of the tensor's strides).
#pragma once

#include "spio/macros.h"          // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"     // IndexSeq, type_at_t
#include "spio/dim.h"             // Fold: range(end) and range(begin, end)
#include "spio/dim_info.h"        // DimInfo: the packed layout of range(tensor)
#include "spio/compound_index.h"  // CompoundIndex: range(tensor)'s digits
#include "spio/tensor.h"          // Tensor: range(tensor)

namespace spio {

namespace detail {

// A counter whose values are made by Make::at(int) (a dimension, or coordinates).
template <typename Make>
class CountingIterator {
public:
    SPIO_HOST_DEVICE explicit constexpr CountingIterator(int position) : _position(position) {}

    SPIO_HOST_DEVICE constexpr auto operator*() const { return Make::at(_position); }

    SPIO_HOST_DEVICE constexpr CountingIterator& operator++() {
        ++_position;
        return *this;
    }

    SPIO_HOST_DEVICE constexpr bool operator!=(const CountingIterator& other) const {
        return _position != other._position;
    }

    SPIO_HOST_DEVICE constexpr bool operator==(const CountingIterator& other) const {
        return _position == other._position;
    }

private:
    int _position;
};

template <typename Make>
class CountingRange {
public:
    // An end before the begin (range(n - k0) past a last partial tile) is the begin: the range
    // is empty, as for (k = b; k < e; ++k) is, instead of counting on through 2^32. Constant
    // bounds fold; bounds known only at run time cost a max before the loop. (Ending the loop
    // at < instead of != would not, but compiles Spio's conv kernels to other code.)
    SPIO_HOST_DEVICE constexpr CountingRange(int begin, int end)
        : _begin(begin), _end(end < begin ? begin : end) {}

    SPIO_HOST_DEVICE constexpr CountingIterator<Make> begin() const {
        return CountingIterator<Make>(_begin);
    }

    SPIO_HOST_DEVICE constexpr CountingIterator<Make> end() const {
        return CountingIterator<Make>(_end);
    }

private:
    int _begin;
    int _end;
};

// range(dim): the counter as a value of D.
template <typename D>
struct MakeDim {
    SPIO_HOST_DEVICE static constexpr D at(int position) { return D(position); }
};

// The packed strides of a size list (the last is 1, each other the product of the sizes after
// it), as a CompoundIndex whose coordinates are range(tensor)'s values.
template <int Index, typename... Infos>
SPIO_HOST_DEVICE constexpr int packed_stride() {
    int stride = 1;
    int position = 0;
    ((stride *= position++ > Index ? Infos::size : 1), ...);
    return stride;
}

template <typename Seq, typename... Infos>
struct PackedIndex;

template <int... Is, typename... Infos>
struct PackedIndex<IndexSeq<Is...>, Infos...> {
    using type = CompoundIndex<
        DimInfo<typename Infos::dim_type, Infos::size, packed_stride<Is, Infos...>()>...>;
};

template <typename... Infos>
struct MakeCoordinates {
    using Index = typename PackedIndex<make_index_seq<sizeof...(Infos)>, Infos...>::type;

    SPIO_HOST_DEVICE static constexpr auto at(int position) {
        return Index(position).coordinates();
    }
};

}  // namespace detail

/// D(0), D(1), ..., up to but excluding end: range(K(32)) yields K(0) ... K(31); range(K(-3))
/// yields nothing.
template <typename B, int S, typename X>
SPIO_HOST_DEVICE constexpr auto range(const Fold<B, S, X>& end) {
    using D = typename Fold<B, S, X>::dim_type;
    return detail::CountingRange<detail::MakeDim<D>>(0, end.get());
}

/// begin, begin + 1, ..., up to but excluding end; both of one dimension type. Empty when end
/// is not after begin.
template <typename B1, int S1, typename X1, typename B2, int S2, typename X2>
SPIO_HOST_DEVICE constexpr auto range(const Fold<B1, S1, X1>& begin, const Fold<B2, S2, X2>& end) {
    using D = typename Fold<B1, S1, X1>::dim_type;
    static_assert(detail::is_same_v<D, typename Fold<B2, S2, X2>::dim_type>,
                  "range(begin, end) needs begin and end of the same dimension type");
    return detail::CountingRange<detail::MakeDim<D>>(begin.get(), end.get());
}

/// The coordinates of every element of a tensor, last dimension fastest.
template <typename DataType, typename... Infos>
SPIO_HOST_DEVICE constexpr auto range(const Tensor<DataType, Infos...>&) {
    return detail::CountingRange<detail::MakeCoordinates<Infos...>>(
        0, Tensor<DataType, Infos...>::size());
}

}  // namespace spio
