// Fragment loads on a GPU: ldmatrix (.x4 / .x2 / .x1, plain and .trans) through
// Fragment::load and load_trans from a typed shared-memory tile, checked against the lane maps;
// with PAIR, two fragments side by side along their columns through one ldmatrix .x4
// (load_pair, load_pair_trans). One warp. Built with -DSHAPE=M16N8K8|M16N8K16,
// -DOPERAND_A=0|1, -DTRANS=0|1, -DPAIR=0|1.
#include "spio/spio.cuh"  // Dim, Tensor, Fragment, lane_id

#ifndef PAIR
#define PAIR 0
#endif

struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};
struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};
struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};

#if OPERAND_A
using Frag = spio::mma::Fragment<spio::mma::SHAPE, spio::mma::OperandA, __half, I, K>;
#else
using Frag = spio::mma::Fragment<spio::mma::SHAPE, spio::mma::OperandB, __half, K, J>;
#endif
using Row = Frag::row_dim;
using Col = Frag::col_dim;

// Fragments side by side along the columns: the tile is kFrags fragments wide.
constexpr int kFrags = PAIR ? 2 : 1;
constexpr int kCols = Frag::cols * kFrags;

// load() needs K contiguous (A: the columns, B: the rows); load_trans() the other dimension.
constexpr bool kColumnsContiguous = (OPERAND_A != 0) != (TRANS != 0);
template <bool ColumnsContiguous>
struct SmemLayout {
    using type =
        spio::Tensor<__half, spio::DimInfo<Row, Frag::rows, kCols>, spio::DimInfo<Col, kCols, 1>>;
};
template <>
struct SmemLayout<false> {
    using type = spio::Tensor<__half, spio::DimInfo<Col, kCols, Frag::rows>,
                              spio::DimInfo<Row, Frag::rows, 1>>;
};
using Smem = SmemLayout<kColumnsContiguous>::type;

// src: the operand, rows x (kFrags * cols) row-major. Lane L's element e of fragment f goes to
// values[f][L][e], with the lane map's row and column (in the whole tile) beside it.
extern "C" __global__ void fragment_load(const __half* src, unsigned short* values, int* rows,
                                         int* cols) {
    __shared__ __align__(16) __half smem[Frag::rows * kCols];
    const auto tile = Smem(smem);
    for (int x = threadIdx.x; x < Frag::rows * kCols; x += 32) {
        *tile[Row(x / kCols)][Col(x % kCols)] = src[x];
    }
    __syncthreads();

    const int lane = spio::arch::lane_id();
    Frag fragments[kFrags];
#if PAIR && TRANS
    // Lanes 16 ... 31 address the second fragment's rows.
    const Col second = Col(lane / 16 * Frag::cols);
    spio::mma::load_pair_trans(fragments[0], fragments[1],
                               tile[Frag::ldmatrix_trans_origin(lane)][second].get());
#elif PAIR
    const Col second = Col(lane / 16 * Frag::cols);
    spio::mma::load_pair(fragments[0], fragments[1],
                         tile[Frag::ldmatrix_origin(lane)][second].get());
#elif TRANS
    fragments[0].load_trans(tile[Frag::ldmatrix_trans_origin(lane)].get());
#else
    fragments[0].load(tile[Frag::ldmatrix_origin(lane)].get());
#endif
    for (int f = 0; f < kFrags; ++f) {
        for (int e = 0; e < Frag::size(); ++e) {
            const int at = (f * 32 + lane) * Frag::size() + e;
            values[at] = __half_as_ushort(fragments[f].get(e));
            rows[at] = Frag::row(lane, e).get();
            cols[at] = Frag::col(lane, e).get() + f * Frag::cols;
        }
    }
}
