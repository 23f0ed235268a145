// load_tile from a checkerboard-swizzled shared tile, the layout of Spio's matmul: a 32 x 32
// f16 A operand stored as 16-byte cells K16(2) x I16(2) x CHECKERS(32), each 16 x 16 block's
// (row, K8) cells placed by the checkerboard. The caller places each lane's ldmatrix row
// (load_tile's lane-cursor form); every loaded element is written out beside its lane-map
// coordinates. One warp.
#include "spio/spio.cuh"  // Dim, Fold, Tensor, CheckerboardIndex, Fragment, tiles, lane_id

struct CHECKERS : spio::Dim<CHECKERS> {
    using spio::Dim<CHECKERS>::Dim;
};
struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};
struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};
using I16 = spio::Fold<I, 16>;
using K8 = spio::Fold<K, 8>;
using K16 = spio::Fold<K, 16>;

using SmemChecker = spio::CheckerboardIndex<8, I, K8, CHECKERS>;
using SmemA = spio::Tensor<uint4, spio::DimInfo<K16, 2, 64>, spio::DimInfo<I16, 2, 32>,
                           spio::DimInfo<CHECKERS, 32, 1>>;
using AFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandA, __half, I, K>;
using ATile = spio::Tensor<AFrag, spio::DimInfo<I16, 2, 2>, spio::DimInfo<K16, 2, 1>>;

// src: A as 32 rows of four 16-byte cells (8 halves each), row-major. Fragment (r, c)'s
// element e of lane L goes to values[r][c][L][e], with its row and column in A beside it.
extern "C" __global__ void checkerboard_load(const uint4* src, unsigned short* values, int* rows,
                                             int* cols) {
    __shared__ uint4 smem[SmemA::storage_size()];
    const auto smem_a = SmemA(smem);
    for (int cell = threadIdx.x; cell < 32 * 4; cell += 32) {
        const int i = cell / 4;
        const int k8 = cell % 4;
        *smem_a[I16(i / 16)][K16(k8 / 2)][SmemChecker(I(i % 16), K8(k8 % 2))] = src[cell];
    }
    __syncthreads();

    const int lane = spio::arch::lane_id();
    AFrag a_data[ATile::storage_size()];
    const auto a_tile = ATile(a_data);
    const auto origin = AFrag::ldmatrix_origin(lane);
    load_tile(a_tile, smem_a[SmemChecker(origin.get<I>(), origin.get<K8>())]);

    for (int r = 0; r < 2; ++r) {
        for (int c = 0; c < 2; ++c) {
            const AFrag& fragment = *a_tile[I16(r)][K16(c)];
            for (int e = 0; e < AFrag::size(); ++e) {
                const int at = ((r * 2 + c) * 32 + lane) * AFrag::size() + e;
                values[at] = __half_as_ushort(fragment.get(e));
                rows[at] = 16 * r + AFrag::row(lane, e).get();
                cols[at] = 16 * c + AFrag::col(lane, e).get();
            }
        }
    }
}
