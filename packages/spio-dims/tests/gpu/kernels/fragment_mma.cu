// Fragments and mma on a GPU: fill A, B and C through the typed lane maps, multiply, and write D
// back through the lane maps, as f32 and rounded to 16 bits. One warp. Built with
// -DSHAPE=M16N8K8|M16N8K16 and -DELEMENT=__half|__nv_bfloat16.
#include "spio/spio.cuh"  // Dim, Fragment, mma, lane_id

struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};
struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};
struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};

using AFrag = spio::mma::Fragment<spio::mma::SHAPE, spio::mma::OperandA, ELEMENT, I, K>;
using BFrag = spio::mma::Fragment<spio::mma::SHAPE, spio::mma::OperandB, ELEMENT, K, J>;
using CFrag = spio::mma::Fragment<spio::mma::SHAPE, spio::mma::OperandC, float, I, J>;

// The offset of (row, col) in a row-major matrix with `cols` columns.
__device__ int row_major(int row, int col, int cols) { return row * cols + col; }

// a: M x K, b: K x N, c: M x N, all row-major. d = a * b + c and twice = 2 * a * b + c (two mma
// accumulating in place), both f32; d16 = d rounded to ELEMENT pairwise (to_half2 /
// to_bfloat162).
extern "C" __global__ void fragment_mma(const ELEMENT* a, const ELEMENT* b, const float* c,
                                        float* d, float* twice, ELEMENT* d16) {
    const int lane = spio::arch::lane_id();
    AFrag fa;
    BFrag fb;
    CFrag fc;
    CFrag fd;
    for (int e = 0; e < AFrag::size(); ++e) {
        fa.set(e, a[row_major(AFrag::row(lane, e).get(), AFrag::col(lane, e).get(), AFrag::cols)]);
    }
    for (int e = 0; e < BFrag::size(); ++e) {
        fb.set(e, b[row_major(BFrag::row(lane, e).get(), BFrag::col(lane, e).get(), BFrag::cols)]);
    }
    for (int e = 0; e < CFrag::size(); ++e) {
        fc.set(e, c[row_major(CFrag::row(lane, e).get(), CFrag::col(lane, e).get(), CFrag::cols)]);
    }

    mma(fa, fb, fc, fd);

    for (int e = 0; e < CFrag::size(); ++e) {
        d[row_major(CFrag::row(lane, e).get(), CFrag::col(lane, e).get(), CFrag::cols)] = fd.get(e);
    }
    // Pair p is elements 2p and 2p + 1: one row, neighbouring columns, so one 4-byte store.
    for (int p = 0; p < CFrag::size() / 2; ++p) {
        ELEMENT* pair = d16 + row_major(CFrag::row(lane, 2 * p).get(),
                                        CFrag::col(lane, 2 * p).get(), CFrag::cols);
        if constexpr (spio::detail::is_same_v<ELEMENT, __half>) {
            *reinterpret_cast<__half2*>(pair) = fd.to_half2(p);
        } else {
            *reinterpret_cast<__nv_bfloat162*>(pair) = fd.to_bfloat162(p);
        }
    }

    mma(fa, fb, fc, fc);
    mma(fa, fb, fc, fc);
    for (int e = 0; e < CFrag::size(); ++e) {
        twice[row_major(CFrag::row(lane, e).get(), CFrag::col(lane, e).get(), CFrag::cols)] =
            fc.get(e);
    }
}
