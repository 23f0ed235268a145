// Register tiles on a GPU: a 32 x 32 x 32 product D = A * B + C by one warp, with A and B staged
// in shared memory in the layout under test, loaded with load_tile / load_tile_trans, multiplied
// with mma over the tiles, and C and D moved through the lane maps. Built with
// -DSHAPE=M16N8K8|M16N8K16, -DELEMENT=__half|__nv_bfloat16, -DA_TRANS=0|1, -DB_TRANS=0|1.
#include "spio/spio.cuh"  // Dim, Fold, Tensor, CompoundIndex, Fragment, tiles, lane_id

struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};
struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};
struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};

using Shape = spio::mma::SHAPE;
using I16 = spio::Fold<I, 16>;
using J8 = spio::Fold<J, 8>;
using KF = spio::Fold<K, Shape::k>;  // K16, or K8 for m16n8k8
constexpr int kTilesK = 32 / Shape::k;

using AFrag = spio::mma::Fragment<Shape, spio::mma::OperandA, ELEMENT, I, K>;
using BFrag = spio::mma::Fragment<Shape, spio::mma::OperandB, ELEMENT, K, J>;
using CFrag = spio::mma::Fragment<Shape, spio::mma::OperandC, float, I, J>;
using ATile = spio::Tensor<AFrag, spio::DimInfo<I16, 2, kTilesK>, spio::DimInfo<KF, kTilesK, 1>>;
using BTile = spio::Tensor<BFrag, spio::DimInfo<KF, kTilesK, 4>, spio::DimInfo<J8, 4, 1>>;
using CTile = spio::Tensor<CFrag, spio::DimInfo<I16, 2, 4>, spio::DimInfo<J8, 4, 1>>;

// Shared memory: rows of 32 elements padded to 40 (80 bytes, keeping 16-byte alignment).
// load() wants K contiguous, load_trans() I (for A) or J (for B).
#if A_TRANS
using SmemA = spio::Tensor<ELEMENT, spio::DimInfo<K, 32, 40>, spio::DimInfo<I, 32, 1>>;
#else
using SmemA = spio::Tensor<ELEMENT, spio::DimInfo<I, 32, 40>, spio::DimInfo<K, 32, 1>>;
#endif
#if B_TRANS
using SmemB = spio::Tensor<ELEMENT, spio::DimInfo<K, 32, 40>, spio::DimInfo<J, 32, 1>>;
#else
using SmemB = spio::Tensor<ELEMENT, spio::DimInfo<J, 32, 40>, spio::DimInfo<K, 32, 1>>;
#endif

// Global memory: a is I x K, b is K x J, c and d are I x J, all row-major.
using GlobalA = spio::Tensor<const ELEMENT, spio::DimInfo<I, 32, 32>, spio::DimInfo<K, 32, 1>>;
using GlobalB = spio::Tensor<const ELEMENT, spio::DimInfo<K, 32, 32>, spio::DimInfo<J, 32, 1>>;
using GlobalC = spio::Tensor<const float, spio::DimInfo<I, 32, 32>, spio::DimInfo<J, 32, 1>>;
using GlobalD = spio::Tensor<float, spio::DimInfo<I, 32, 32>, spio::DimInfo<J, 32, 1>>;
using IndexA = spio::CompoundIndex<spio::DimInfo<I, 32, 32>, spio::DimInfo<K, 32, 1>>;
using IndexB = spio::CompoundIndex<spio::DimInfo<K, 32, 32>, spio::DimInfo<J, 32, 1>>;

extern "C" __global__ void mma_tile(const ELEMENT* a, const ELEMENT* b, const float* c, float* d) {
    __shared__ __align__(16) ELEMENT smem_a[32 * 40];
    __shared__ __align__(16) ELEMENT smem_b[32 * 40];
    // The same typed coordinates land in whichever layout each shared tensor has.
    for (int x = threadIdx.x; x < 32 * 32; x += 32) {
        *SmemA(smem_a)[IndexA(x)] = *GlobalA(a)[IndexA(x)];
        *SmemB(smem_b)[IndexB(x)] = *GlobalB(b)[IndexB(x)];
    }
    __syncthreads();

    const int lane = spio::arch::lane_id();
    AFrag a_data[ATile::storage_size()];
    BFrag b_data[BTile::storage_size()];
    CFrag c_data[CTile::storage_size()];
    const auto a_tile = ATile(a_data);
    const auto b_tile = BTile(b_data);
    const auto c_tile = CTile(c_data);
#if A_TRANS
    load_tile_trans(a_tile, SmemA(smem_a), lane);
#else
    load_tile(a_tile, SmemA(smem_a), lane);
#endif
#if B_TRANS
    load_tile_trans(b_tile, SmemB(smem_b), lane);
#else
    load_tile(b_tile, SmemB(smem_b), lane);
#endif
    for (auto i16 : spio::range(CTile::size<I16>())) {
        for (auto j8 : spio::range(CTile::size<J8>())) {
            for (int e = 0; e < CFrag::size(); ++e) {
                const auto at = CFrag::coordinates(lane, e);
                c_tile[i16][j8]->set(e, *GlobalC(c)[i16][j8][at]);
            }
        }
    }

    mma(a_tile, b_tile, c_tile, c_tile);

    for (auto i16 : spio::range(CTile::size<I16>())) {
        for (auto j8 : spio::range(CTile::size<J8>())) {
            for (int e = 0; e < CFrag::size(); ++e) {
                *GlobalD(d)[i16][j8][CFrag::coordinates(lane, e)] = c_tile[i16][j8]->get(e);
            }
        }
    }
}
