// Register tiles of fragments: mma, loads and fills over whole tiles, by typed dimensions.
//
// A register tile is a spio::Tensor whose elements are fragments, stored in a local array that
// the compiler keeps in registers (every loop here is unrolled, so every index is a constant):
//
//     using ATile = spio::Tensor<AFrag, spio::DimInfo<I16, 2, 1>, spio::DimInfo<K16, 1, 1>>;
//     using BTile = spio::Tensor<BFrag, spio::DimInfo<K16, 1, 4>, spio::DimInfo<J8, 4, 1>>;
//     using CTile = spio::Tensor<CFrag, spio::DimInfo<I16, 2, 4>, spio::DimInfo<J8, 4, 1>>;
//     AFrag a_data[ATile::storage_size()];
//     ...
//     auto a_tile = ATile(a_data);
//     zero(c_tile);
//     const int lane = spio::arch::lane_id();
//     load_tile(a_tile, smem_a, lane);       // ldmatrix, one per fragment
//     load_tile_trans(b_tile, smem_b, lane);
//     mma(a_tile, b_tile, c_tile, c_tile);  // c[i16][j8] += a[i16][k16] * b[k16][j8]
//
// The tile dimensions are the fragment dimensions folded by the fragment's extent: an A tile of
// m16n8k16 fragments over I x K has I16 and K16, a B tile K16 and J8, C and D tiles I16 and J8
// (m16n8k8: K8 for K16). Coarser folds may nest above those (I32 over I16, for warp blocking),
// and a tile may omit a dimension of extent one (an A tile with I16 only).
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#include "spio/detail/meta.h"  // is_same_v, TypeList
#include "spio/dim.h"          // Fold: the tile dimensions
#include "spio/dim_info.h"     // Layout: which dimensions a tile has
#include "spio/cursor.h"       // Cursor: shared-memory positions the tile loads check
#include "spio/tensor.h"       // Tensor: the register tiles
#include "spio/fragment.cuh"   // Fragment, mma on fragments, lane maps

namespace spio::detail {

// The fold of D by the fragment's extent N along it: I16 for the rows of an A fragment.
template <typename D, int N>
using tile_fold_t = Fold<typename D::base_type, N * D::stride>;

// The number of fragments a tile with DimInfos Infos holds along fold F: F's extent in the
// tile, or 1 when the tile has no dimension of F's base.
template <typename F, typename... Infos>
SPIO_HOST_DEVICE constexpr int tile_extent(TypeList<Infos...>) {
    using Layout = detail::Layout<Infos...>;
    using B = typename F::base_type;
    if constexpr (Layout::template has_base<B>()) {
        // Case: the tile spans F's base: its logical extent in units of F.
        return Layout::template logical_extent<B>() / F::stride;
    } else {
        // Case: the tile omits F's base: one fragment along it.
        return 1;
    }
}

// The finest fold stride of base B among Infos, or 0 when B is absent.
template <typename B, typename... Infos>
SPIO_HOST_DEVICE constexpr int finest_fold_stride(TypeList<Infos...>) {
    int finest = 0;
    ((finest =
          (is_same_v<typename Infos::base_type, B> && (finest == 0 || Infos::fold_stride < finest))
              ? Infos::fold_stride
              : finest),
     ...);
    return finest;
}

// Whether a tile holds one whole fragment per position: every dimension folds the fragment's
// row or column base, and the finest fold of each is the fragment's extent along it (I16 for
// 16-row fragments; coarser folds such as I32 may nest above it).
template <typename RowFold, typename ColFold, typename... Infos>
SPIO_HOST_DEVICE constexpr bool tile_dims_conform(TypeList<Infos...> infos) {
    using RowBase = typename RowFold::base_type;
    using ColBase = typename ColFold::base_type;
    constexpr bool only_row_and_col = ((is_same_v<typename Infos::base_type, RowBase> ||
                                        is_same_v<typename Infos::base_type, ColBase>) &&
                                       ...);
    const int finest_row = finest_fold_stride<RowBase>(infos);
    const int finest_col = finest_fold_stride<ColBase>(infos);
    return only_row_and_col && (finest_row == 0 || finest_row == RowFold::stride) &&
           (finest_col == 0 || finest_col == ColFold::stride);
}

// The position of fragment (row, col) in a tile: subscripts of the folds the tile has.
template <typename RowFold, typename ColFold, typename Tile>
SPIO_DEVICE auto& tile_at(const Tile& tile, int row, int col) {
    return *tile[make_coordinates(RowFold(row), ColFold(col))];
}

// The facts mma and the tile loads need about a tile of fragments: its dimension folds and its
// extent along them.
template <typename Tile>
struct FragmentTile;

template <typename Frag, typename... Infos>
struct FragmentTile<Tensor<Frag, Infos...>> {
    using fragment_type = typename RemoveConst<Frag>::type;
    using RowFold = tile_fold_t<typename fragment_type::row_dim, fragment_type::rows>;
    using ColFold = tile_fold_t<typename fragment_type::col_dim, fragment_type::cols>;
    static constexpr int rows = tile_extent<RowFold>(TypeList<Infos...>());
    static constexpr int cols = tile_extent<ColFold>(TypeList<Infos...>());
    static constexpr bool conforms = tile_dims_conform<RowFold, ColFold>(TypeList<Infos...>());
};

// The DimInfos of a shared-memory tensor or cursor as a TypeList; void for any other type (a
// raw pointer wrapper, say), whose addressing the checks below then trust.
template <typename T>
struct DimInfosOf {
    using type = void;
};

template <typename D, typename... Infos>
struct DimInfosOf<Tensor<D, Infos...>> {
    using type = TypeList<Infos...>;
};

template <typename D, typename... Infos>
struct DimInfosOf<Cursor<D, Infos...>> {
    using type = TypeList<Infos...>;
};

// Whether a layout reaches every multiple of Step units of base B: it folds B, and its finest
// fold of B divides Step (Step 0: nothing to reach).
template <typename B, int Step, typename List>
SPIO_HOST_DEVICE constexpr bool reaches_step() {
    if constexpr (Step == 0 || is_same_v<List, void>) {
        // Case: no offset along B, or a layout these checks cannot see.
        return true;
    } else {
        // Case: a tensor or cursor: its finest fold of B must divide Step.
        const int finest = finest_fold_stride<B>(List());
        return finest != 0 && Step % finest == 0;
    }
}

// The gcd of the rows (Col false) or columns (Col true) of all lanes' ldmatrix origins: the
// step along that dimension a shared-memory layout must reach.
template <typename Frag, bool Trans, bool Col>
SPIO_HOST_DEVICE constexpr int ldmatrix_origin_step() {
    int step = 0;
    for (int lane = 0; lane < 32; ++lane) {
        const auto origin = Trans ? Frag::ldmatrix_trans_origin(lane) : Frag::ldmatrix_origin(lane);
        const int value = Col ? origin.template get<typename Frag::col_dim>().get()
                              : origin.template get<typename Frag::row_dim>().get();
        step = gcd(step, value);
    }
    return step;
}

// Load each fragment (r, c) of a tile from lane_smem[RowFold(r)][ColFold(c)], with ldmatrix
// .trans when Trans holds.
template <bool Trans, typename Frag, typename... Infos, typename LaneSmem>
__device__ void load_fragments(const Tensor<Frag, Infos...>& tile, const LaneSmem& lane_smem) {
    using T = FragmentTile<Tensor<Frag, Infos...>>;
    using Smem = typename DimInfosOf<LaneSmem>::type;
    static_assert(T::conforms,
                  "load_tile: each tile dimension must fold a fragment dimension by a multiple of "
                  "the fragment's extent (I16 and K16 for an m16n8k16 A tile, K16 and J8 for B)");
    static_assert(
        (T::rows == 1 ||
         reaches_step<typename T::RowFold::base_type, T::RowFold::stride, Smem>()) &&
            (T::cols == 1 ||
             reaches_step<typename T::ColFold::base_type, T::ColFold::stride, Smem>()),
        "load_tile: the shared-memory tensor cannot reach the tile's fragments: it needs a fold "
        "of each tile dimension's base no coarser than the tile's (J8 or J for a tile of J8, "
        "not J16 alone)");
#pragma unroll
    for (int r = 0; r < T::rows; ++r) {
#pragma unroll
        for (int c = 0; c < T::cols; ++c) {
            const auto at = make_coordinates(typename T::RowFold(r), typename T::ColFold(c));
            auto& fragment = tile_at<typename T::RowFold, typename T::ColFold>(tile, r, c);
            if constexpr (Trans) {
                // Case: the tile's other dimension (I for A, J for B) is contiguous.
                fragment.load_trans(lane_smem[at].get());
            } else {
                // Case: K is contiguous.
                fragment.load(lane_smem[at].get());
            }
        }
    }
}

// load_fragments from smem at each lane's ldmatrix origin, after checking that smem's layout
// reaches those origins (a checkerboard tensor without I, say, would drop the lane's row).
template <bool Trans, typename Frag, typename... Infos, typename Smem>
__device__ void load_fragments_at_origin(const Tensor<Frag, Infos...>& tile, const Smem& smem,
                                         int lane) {
    using List = typename DimInfosOf<Smem>::type;
    using Row = typename Frag::row_dim;
    using Col = typename Frag::col_dim;
    static_assert(
        reaches_step<typename Row::base_type, ldmatrix_origin_step<Frag, Trans, false>(), List>() &&
            reaches_step<typename Col::base_type, ldmatrix_origin_step<Frag, Trans, true>(),
                         List>(),
        "load_tile(tile, smem, lane): the shared-memory tensor cannot reach each lane's ldmatrix "
        "row: it needs the fragment's row and column dimensions (or folds fine enough); for a "
        "swizzled layout, pass a cursor already at the lane's row: load_tile(tile, lane_smem)");
    if constexpr (Trans) {
        // Case: ldmatrix .trans rows.
        load_fragments<true>(tile, smem[Frag::ldmatrix_trans_origin(lane)]);
    } else {
        // Case: plain ldmatrix rows.
        load_fragments<false>(tile, smem[Frag::ldmatrix_origin(lane)]);
    }
}

}  // namespace spio::detail

namespace spio::mma {

/// D = A * B + C over register tiles, one mma per (row, column, reduction) fragment triple:
///
///     d[i16][j8] = sum over k16 of a[i16][k16] * b[k16][j8] + c[i16][j8]
///
/// (K8 for K16 with m16n8k8 fragments). All 32 lanes call it together; d may be c. The tiles
/// conform when a spans I x K, b K x J, and c and d I x J, with one extent per dimension.
template <typename AFrag, typename... AInfos, typename BFrag, typename... BInfos, typename CFrag,
          typename... CInfos, typename DFrag, typename... DInfos>
__device__ void mma(const Tensor<AFrag, AInfos...>& a, const Tensor<BFrag, BInfos...>& b,
                    const Tensor<CFrag, CInfos...>& c, const Tensor<DFrag, DInfos...>& d) {
    using A = detail::FragmentTile<Tensor<AFrag, AInfos...>>;
    using B = detail::FragmentTile<Tensor<BFrag, BInfos...>>;
    using C = detail::FragmentTile<Tensor<CFrag, CInfos...>>;
    using D = detail::FragmentTile<Tensor<DFrag, DInfos...>>;
    static_assert(A::conforms && B::conforms && C::conforms && D::conforms,
                  "mma(a, b, c, d) on tiles: each tile dimension must fold a fragment dimension by "
                  "a multiple of the fragment's extent (I16 and K16 for an m16n8k16 A tile, K16 "
                  "and J8 for B, I16 and J8 for C and D)");
    static_assert(A::cols == B::rows,
                  "mma(a, b, c, d) on tiles: a and b must span the same extent of the reduction "
                  "dimension (K16 in d[i16][j8] = a[i16][k16] * b[k16][j8] + c[i16][j8])");
    static_assert(A::rows == C::rows && A::rows == D::rows,
                  "mma(a, b, c, d) on tiles: a, c and d must span the same extent of the row "
                  "dimension (I16 in d[i16][j8] = a[i16][k16] * b[k16][j8] + c[i16][j8])");
    static_assert(B::cols == C::cols && B::cols == D::cols,
                  "mma(a, b, c, d) on tiles: b, c and d must span the same extent of the column "
                  "dimension (J8 in d[i16][j8] = a[i16][k16] * b[k16][j8] + c[i16][j8])");
    // Reduction outermost: the mmas of one k are independent, so they can overlap in the
    // tensor cores; each later k accumulates into d.
#pragma unroll
    for (int k = 0; k < A::cols; ++k) {
#pragma unroll
        for (int i = 0; i < A::rows; ++i) {
#pragma unroll
            for (int j = 0; j < B::cols; ++j) {
                auto& acc = detail::tile_at<typename D::RowFold, typename D::ColFold>(d, i, j);
                const auto& a_frag =
                    detail::tile_at<typename A::RowFold, typename A::ColFold>(a, i, k);
                const auto& b_frag =
                    detail::tile_at<typename B::RowFold, typename B::ColFold>(b, k, j);
                if (k == 0) {
                    mma(a_frag, b_frag,
                        detail::tile_at<typename C::RowFold, typename C::ColFold>(c, i, j), acc);
                } else {
                    mma(a_frag, b_frag, acc, acc);
                }
            }
        }
    }
}

/// Set every element of every fragment of a register tile to zero.
template <typename Frag, typename... Infos>
__device__ void zero(const Tensor<Frag, Infos...>& tile) {
#pragma unroll
    for (int f = 0; f < Tensor<Frag, Infos...>::storage_size(); ++f) tile.get()[f].zero();
}

/// Set every element of every fragment of a register tile to value.
template <typename Frag, typename... Infos>
__device__ void fill(const Tensor<Frag, Infos...>& tile, typename Frag::element_type value) {
#pragma unroll
    for (int f = 0; f < Tensor<Frag, Infos...>::storage_size(); ++f) tile.get()[f].fill(value);
}

/// Load every fragment of an A or B register tile from shared memory with ldmatrix.
///
/// smem is a shared-memory tensor or cursor at the tile's origin that has the fragments' row
/// and column dimensions (folded as it likes: I x K of __half, I x K8 of 16-byte vectors, ...),
/// unit stride along K, and 16-byte aligned rows of 8 elements. Fragment (r, c) loads from
/// smem[RowFold(r)][ColFold(c)] at each lane's ldmatrix_origin(lane). All 32 lanes call it,
/// each with its lane (spio::arch::lane_id(), read once per kernel):
///
///     load_tile(a_tile, smem_a, lane);
template <typename Frag, typename... Infos, typename Smem>
__device__ void load_tile(const Tensor<Frag, Infos...>& tile, const Smem& smem, int lane) {
    detail::load_fragments_at_origin<false>(tile, smem, lane);
}

/// Load every fragment of an A or B register tile from lane_smem, a shared-memory cursor
/// already at this lane's ldmatrix row of the tile's first fragment; fragment (r, c) loads from
/// lane_smem[RowFold(r)][ColFold(c)]. For layouts whose lane rows the caller places, such as a
/// checkerboard swizzle:
///
///     const auto origin = AFrag::ldmatrix_origin(lane);  // (I, K) of this lane's row
///     load_tile(a_tile, smem_a[SmemChecker(origin.get<I>(), origin.get<K8>())]);
template <typename Frag, typename... Infos, typename LaneSmem>
__device__ void load_tile(const Tensor<Frag, Infos...>& tile, const LaneSmem& lane_smem) {
    detail::load_fragments<false>(tile, lane_smem);
}

/// Load every fragment of an A or B register tile with ldmatrix .trans: as load_tile, for
/// shared memory with unit stride along I (A tiles) or J (B tiles); lanes start at
/// ldmatrix_trans_origin(lane).
template <typename Frag, typename... Infos, typename Smem>
__device__ void load_tile_trans(const Tensor<Frag, Infos...>& tile, const Smem& smem, int lane) {
    detail::load_fragments_at_origin<true>(tile, smem, lane);
}

/// Load every fragment with ldmatrix .trans from lane_smem, a cursor already at this lane's
/// ldmatrix_trans_origin row of the tile's first fragment.
template <typename Frag, typename... Infos, typename LaneSmem>
__device__ void load_tile_trans(const Tensor<Frag, Infos...>& tile, const LaneSmem& lane_smem) {
    detail::load_fragments<true>(tile, lane_smem);
}

}  // namespace spio::mma
