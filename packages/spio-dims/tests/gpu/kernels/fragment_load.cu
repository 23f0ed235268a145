// Fragment loads on a GPU: ldmatrix (.x4 / .x2 / .x1, plain and .trans) through
// Fragment::load and load_trans from a typed shared-memory tile, checked against the lane maps.
// One warp. Built with -DSHAPE=M16N8K8|M16N8K16, -DOPERAND_A=0|1, -DTRANS=0|1.
#include "spio/spio.cuh"  // Dim, Tensor, Fragment, lane_id

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

// load() needs K contiguous (A: the columns, B: the rows); load_trans() the other dimension.
constexpr bool kColumnsContiguous = (OPERAND_A != 0) != (TRANS != 0);
template <bool ColumnsContiguous>
struct SmemLayout {
    using type = spio::Tensor<__half, spio::DimInfo<Row, Frag::rows, Frag::cols>,
                              spio::DimInfo<Col, Frag::cols, 1>>;
};
template <>
struct SmemLayout<false> {
    using type = spio::Tensor<__half, spio::DimInfo<Col, Frag::cols, Frag::rows>,
                              spio::DimInfo<Row, Frag::rows, 1>>;
};
using Smem = SmemLayout<kColumnsContiguous>::type;

// src: the operand, rows x cols row-major. Lane L's element e goes to values[L][e], with the
// lane map's row and column beside it.
extern "C" __global__ void fragment_load(const __half* src, unsigned short* values, int* rows,
                                         int* cols) {
    __shared__ __align__(16) __half smem[Frag::rows * Frag::cols];
    const auto tile = Smem(smem);
    for (int x = threadIdx.x; x < Frag::rows * Frag::cols; x += 32) {
        *tile[Row(x / Frag::cols)][Col(x % Frag::cols)] = src[x];
    }
    __syncthreads();

    const int lane = spio::arch::lane_id();
    Frag fragment;
#if TRANS
    fragment.load_trans(tile[Frag::ldmatrix_trans_origin(lane)].get());
#else
    fragment.load(tile[Frag::ldmatrix_origin(lane)].get());
#endif
    for (int e = 0; e < Frag::size(); ++e) {
        values[lane * Frag::size() + e] = __half_as_ushort(fragment.get(e));
        rows[lane * Frag::size() + e] = Frag::row(lane, e).get();
        cols[lane * Frag::size() + e] = Frag::col(lane, e).get();
    }
}
