// DimInfo<D, Size, Stride>: one dimension of a tensor or compound index, and the layout rules a
// list of them implies.
//
//     using A = spio::Tensor<float, spio::DimInfo<K8, 4, 32>, spio::DimInfo<I, 4, 8>,
//                            spio::DimInfo<K, 8, 1>>;
//
// lists K8(4) x I(4) x K(8), outermost first: Size counts units of D, Stride counts elements.
// A base dimension listed through several folds (K8 and K above) is one logical dimension
// K(0) ... K(31): a logical K(x) has one digit per fold,
//
//     digit of the coarsest fold F:    x / F                 (K8: x / 8)
//     digit of a finer fold f:         x % f' / f            (K:  x % 8 / 1)
//
// where f' is the next coarser fold's stride, and lies at sum(digit * Stride) elements:
// K(12) is K8(1), K(4), at 1 * 32 + 4 * 1. The folds of one base must nest (each stride
// divides the next coarser one).
//
// The digits of a cursor's logical offset round down (floor division and its non-negative
// remainder), so a negative offset splits like a positive one: K(-1) is K8(-1), K(7), at
// -32 + 7. That is what makes a[K8(1)][K(-1)] land on a[K(7)], where the whole K8(1) has
// already moved the position and K(-1) is split on its own. For power-of-2 folds that is an
// arithmetic shift and a mask. Compound-index offsets are non-negative and use unsigned
// division (a shift and a mask for powers of 2, as for threadIdx.x / 16).
#pragma once

#include "spio/macros.h"       // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"  // TypeList, is_same_v, conditional_t
#include "spio/dim.h"          // is_fold_v: what a DimInfo describes

namespace spio {

/// Dimension D of a tensor or compound index: Size units of D, Stride elements apart.
template <typename D, int Size, int Stride>
struct DimInfo {
    static_assert(detail::is_fold_v<D>,
                  "DimInfo<D, Size, Stride>: D must be a dimension or a fold");
    static_assert(Size > 0, "DimInfo<D, Size, Stride>: a dimension's size must be positive");
    static_assert(Stride > 0,
                  "DimInfo<D, Size, Stride>: a dimension's stride must be positive (with 0 or "
                  "less, storage_size() no longer counts the elements the tensor reaches)");

    using dim_type = D;
    using base_type = typename D::base_type;
    static constexpr int size = Size;
    static constexpr int stride = Stride;
    static constexpr int fold_stride = D::stride;
};

namespace detail {

// Whether n is a power of 2, and its log2 if so; floor division by such n is a shift.
SPIO_HOST_DEVICE constexpr bool is_power_of_2(int n) { return n > 0 && (n & (n - 1)) == 0; }

SPIO_HOST_DEVICE constexpr int log2_of_power_of_2(int n) {
    int log = 0;
    while ((1 << log) < n) ++log;
    return log;
}

// x / N rounded down (toward minus infinity), for N > 0: floor_div<8>(-1) == -1.
template <int N>
SPIO_HOST_DEVICE constexpr int floor_div(int x) {
    if constexpr (is_power_of_2(N)) {
        // Case: a power of 2: the arithmetic shift rounds down.
        return x >> log2_of_power_of_2(N);
    } else {
        // Case: any other divisor: ~x is -x - 1 >= 0 for negative x, and never overflows.
        return x >= 0 ? x / N : ~(~x / N);
    }
}

// The remainder that goes with floor_div, from 0 to N - 1: floor_mod<8>(-1) == 7.
template <int N>
SPIO_HOST_DEVICE constexpr int floor_mod(int x) {
    if constexpr (is_power_of_2(N)) {
        // Case: a power of 2: the low bits, whatever the sign.
        return x & (N - 1);
    } else {
        // Case: any other divisor.
        return x >= 0 ? x % N : N - 1 - ~x % N;
    }
}

template <typename T>
struct IsDimInfo {
    static constexpr bool value = false;
};

template <typename D, int Size, int Stride>
struct IsDimInfo<DimInfo<D, Size, Stride>> {
    static constexpr bool value = true;
};

template <typename T>
inline constexpr bool is_dim_info_v = IsDimInfo<T>::value;

// The base dimensions of Infos, each once, in order of first appearance:
// (K8, I, K) -> TypeList<K, I>.
template <typename Seen, typename... Infos>
struct UniqueBases {
    using type = Seen;
};

template <typename... Seen, typename Info, typename... Infos>
struct UniqueBases<TypeList<Seen...>, Info, Infos...> {
    using B = typename Info::base_type;
    using type = typename UniqueBases<
        conditional_t<(is_same_v<B, Seen> || ...), TypeList<Seen...>, TypeList<Seen..., B>>,
        Infos...>::type;
};

// The layout rules of a DimInfo list (see the file comment). Everything here is evaluated by
// the compiler, except folded_offset() (a cursor's folded bases) and digit() (compound indices).
template <typename... Infos>
struct Layout {
    /// The base dimensions, each once: (K8, I, K) -> TypeList<K, I>.
    using bases = typename UniqueBases<TypeList<>, Infos...>::type;

    /// Whether some entry folds base B.
    template <typename B>
    SPIO_HOST_DEVICE static constexpr bool has_base() {
        return (is_same_v<typename Infos::base_type, B> || ...);
    }

    /// The position of the entry of exactly type D, or -1.
    template <typename D>
    SPIO_HOST_DEVICE static constexpr int index_of() {
        int index = -1;
        int position = 0;
        ((index = (index < 0 && is_same_v<typename Infos::dim_type, D>) ? position : index,
          ++position),
         ...);
        return index;
    }

    /// The largest fold stride among B's entries (K8, K -> 8), or 0 when B is absent.
    template <typename B>
    SPIO_HOST_DEVICE static constexpr int coarsest_fold_stride() {
        int coarsest = 0;
        ((coarsest = (is_same_v<typename Infos::base_type, B> && Infos::fold_stride > coarsest)
                         ? Infos::fold_stride
                         : coarsest),
         ...);
        return coarsest;
    }

    /// The smallest fold stride of B above FoldStride (K, K8, K16 above 1 -> 8), or 0.
    template <typename B, int FoldStride>
    SPIO_HOST_DEVICE static constexpr int next_coarser_fold_stride() {
        int next = 0;
        ((next = (is_same_v<typename Infos::base_type, B> && Infos::fold_stride > FoldStride &&
                  (next == 0 || Infos::fold_stride < next))
                     ? Infos::fold_stride
                     : next),
         ...);
        return next;
    }

    /// Whether B is folded: its coarsest entry counts more than one unit of B, so a subscript
    /// of B may land inside one of that entry's units.
    template <typename B>
    SPIO_HOST_DEVICE static constexpr bool is_folded() {
        return coarsest_fold_stride<B>() > 1;
    }

    /// Size and memory stride of B's coarsest entry.
    template <typename B>
    SPIO_HOST_DEVICE static constexpr int coarsest_size() {
        int size = 0;
        ((size = (is_same_v<typename Infos::base_type, B> &&
                  Infos::fold_stride == coarsest_fold_stride<B>())
                     ? Infos::size
                     : size),
         ...);
        return size;
    }

    template <typename B>
    SPIO_HOST_DEVICE static constexpr int coarsest_stride() {
        int stride = 0;
        ((stride = (is_same_v<typename Infos::base_type, B> &&
                    Infos::fold_stride == coarsest_fold_stride<B>())
                       ? Infos::stride
                       : stride),
         ...);
        return stride;
    }

    /// The extent of B in units of B: the coarsest entry's size times its fold stride
    /// (K8(4) x I(4) x K(8) -> K: 32).
    template <typename B>
    SPIO_HOST_DEVICE static constexpr int logical_extent() {
        return coarsest_size<B>() * coarsest_fold_stride<B>();
    }

    /// Whether the folds of each base nest: distinct strides, each dividing the next coarser.
    SPIO_HOST_DEVICE static constexpr bool folds_nest() { return (entry_nests<Infos>() && ...); }

    /// Elements a tensor spans: 1 + sum((size - 1) * stride).
    SPIO_HOST_DEVICE static constexpr int storage_size() {
        return 1 + (0 + ... + ((Infos::size - 1) * Infos::stride));
    }

    /// The number of positions: the product of the sizes.
    SPIO_HOST_DEVICE static constexpr int num_elements() { return (1 * ... * Infos::size); }

    /// The largest memory stride, which marks the outermost entry.
    SPIO_HOST_DEVICE static constexpr int max_stride() {
        int largest = 0;
        ((largest = Infos::stride > largest ? Infos::stride : largest), ...);
        return largest;
    }

    /// The element offset of logical coordinate x (in units of B, of either sign) of a folded
    /// base B: the sum of each of B's entries' digit times its stride, the digits rounded down.
    template <typename B>
    SPIO_HOST_DEVICE static constexpr int folded_offset(int x) {
        return (0 + ... + digit_offset<B, Infos>(x));
    }

    /// The digit of the entry at position Index in a non-negative compound-index offset:
    /// offset / stride % size, without the % for the outermost entry (the first with the
    /// largest stride), which takes the whole quotient.
    template <int Index>
    SPIO_HOST_DEVICE static constexpr int digit(int offset) {
        using Info = type_at_t<Index, Infos...>;
        if constexpr (Index == first_index_with_stride<max_stride()>()) {
            // Case: the outermost entry: the whole quotient.
            return static_cast<int>(static_cast<unsigned>(offset) / Info::stride);
        } else {
            // Case: an inner entry wraps at its size.
            return static_cast<int>(static_cast<unsigned>(offset) / Info::stride % Info::size);
        }
    }

private:
    template <typename Info>
    SPIO_HOST_DEVICE static constexpr bool entry_nests() {
        using B = typename Info::base_type;
        constexpr int coarser = next_coarser_fold_stride<B, Info::fold_stride>();
        constexpr int same_stride =
            (0 + ... +
             ((is_same_v<typename Infos::base_type, B> && Infos::fold_stride == Info::fold_stride)
                  ? 1
                  : 0));
        return same_stride == 1 && (coarser == 0 || coarser % Info::fold_stride == 0);
    }

    template <int Stride>
    SPIO_HOST_DEVICE static constexpr int first_index_with_stride() {
        int index = -1;
        int position = 0;
        ((index = (index < 0 && Infos::stride == Stride) ? position : index, ++position), ...);
        return index;
    }

    template <typename B, typename Info>
    SPIO_HOST_DEVICE static constexpr int digit_offset(int x) {
        if constexpr (!is_same_v<typename Info::base_type, B>) {
            // Case: an entry of another base.
            return 0;
        } else if constexpr (next_coarser_fold_stride<B, Info::fold_stride>() == 0) {
            // Case: the coarsest fold: the quotient, rounded down.
            return floor_div<Info::fold_stride>(x) * Info::stride;
        } else {
            // Case: a finer fold: the digit below the next coarser fold; the remainder is
            // non-negative, so unsigned division splits it.
            constexpr int coarser = next_coarser_fold_stride<B, Info::fold_stride>();
            return static_cast<int>(static_cast<unsigned>(floor_mod<coarser>(x)) /
                                    Info::fold_stride) *
                   Info::stride;
        }
    }
};

// Whether the folds of a DimInfo list nest; true when the list is not all DimInfos, which the
// user's tensor reports on its own.
template <bool AllDimInfos, typename... Infos>
struct FoldsNest {
    static constexpr bool value = Layout<Infos...>::folds_nest();
};

template <typename... Infos>
struct FoldsNest<false, Infos...> {
    static constexpr bool value = true;
};

}  // namespace detail

}  // namespace spio
