// One kernel per device concept of spio-dims; test_headers.py compiles this file for sm_80,
// sm_89 and sm_90 and checks that each kernel's PTX holds the instructions the concept stands
// for (and no local memory: register tiles stay in registers).
#include "spio/spio.cuh"  // everything: the core and the device parts

struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};
struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};
struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};
using I16 = spio::Fold<I, 16>;
using J8 = spio::Fold<J, 8>;
using K8 = spio::Fold<K, 8>;
using K16 = spio::Fold<K, 16>;

// cp.async with zero fill, commit, wait_group and wait_all.
extern "C" __global__ void async_copy(const uint4* src, uint4* dst, int valid) {
    __shared__ uint4 smem[64];
    const int t = threadIdx.x;
    spio::arch::cp_async_cg_16(&smem[t], &src[t], t < valid ? 16 : 0);
    spio::arch::cp_async_commit_group();
    spio::arch::cp_async_cg_16(&smem[32 + t], &src[32 + t]);
    spio::arch::cp_async_commit_group();
    spio::arch::cp_async_wait_group<1>();
    spio::arch::cp_async_wait_all();
    __syncthreads();
    dst[t] = smem[63 - t];
}

// A line read, then dropped from L2 without its write-back.
extern "C" __global__ void discard_after_read(const float4* lines, float4* out) {
    const int t = threadIdx.x;
    out[t] = lines[t];
    __syncwarp();
    if (t % 8 == 0) spio::arch::discard_line(&lines[t]);
}

// ldmatrix .x1 / .x2 / .x4, plain and .trans.
extern "C" __global__ void ldmatrix_all(unsigned* out) {
    __shared__ __align__(16) unsigned short smem[256];
    const int lane = spio::arch::lane_id();
    for (int i = lane; i < 256; i += 32) smem[i] = static_cast<unsigned short>(i);
    __syncthreads();
    const unsigned short* row = smem + 8 * lane;
    unsigned r1[1], r2[2], r4[4], t1[1], t2[2], t4[4];
    spio::arch::ldmatrix(r1, row);
    spio::arch::ldmatrix(r2, row);
    spio::arch::ldmatrix(r4, row);
    spio::arch::ldmatrix_trans(t1, row);
    spio::arch::ldmatrix_trans(t2, row);
    spio::arch::ldmatrix_trans(t4, row);
    out[lane] = r1[0] ^ r2[1] ^ r4[3] ^ t1[0] ^ t2[1] ^ t4[3];
}

// Fragments of both shapes and both 16-bit types: lane maps, element access, mma, to_half2 and
// to_bfloat162.
template <typename Shape, typename T>
__device__ void fragment_mma(const T* a, const T* b, __half2* h, __nv_bfloat162* bf) {
    using AFrag = spio::mma::Fragment<Shape, spio::mma::OperandA, T, I, K>;
    using BFrag = spio::mma::Fragment<Shape, spio::mma::OperandB, T, K, J>;
    using CFrag = spio::mma::Fragment<Shape, spio::mma::OperandC, float, I, J>;
    const int lane = spio::arch::lane_id();
    AFrag fa;
    BFrag fb;
    CFrag fc;
    for (int e = 0; e < AFrag::size(); ++e) {
        fa.set(e, a[AFrag::row(lane, e).get() * AFrag::cols + AFrag::col(lane, e).get()]);
    }
    for (int e = 0; e < BFrag::size(); ++e) {
        fb.set(e, b[BFrag::row(lane, e).get() * BFrag::cols + BFrag::col(lane, e).get()]);
    }
    fc.zero();
    mma(fa, fb, fc, fc);
    h[lane] = fc.to_half2(0);
    bf[lane] = fc.to_bfloat162(1);
}

extern "C" __global__ void fragment_mma_all(const __half* ah, const __half* bh,
                                            const __nv_bfloat16* ab, const __nv_bfloat16* bb,
                                            __half2* h, __nv_bfloat162* bf) {
    fragment_mma<spio::mma::M16N8K16>(ah, bh, h, bf);
    fragment_mma<spio::mma::M16N8K8>(ah, bh, h + 32, bf + 32);
    fragment_mma<spio::mma::M16N8K16>(ab, bb, h + 64, bf + 64);
    fragment_mma<spio::mma::M16N8K8>(ab, bb, h + 96, bf + 96);
}

// Register tiles: load_tile (A, K contiguous), load_tile_trans (B, J contiguous), zero, mma,
// and the accumulators written through the lane maps and a typed global tensor.
using AFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandA, __half, I, K>;
using BFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandB, __half, K, J>;
using CFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandC, float, I, J>;
using ATile = spio::Tensor<AFrag, spio::DimInfo<I16, 2, 2>, spio::DimInfo<K16, 2, 1>>;
using BTile = spio::Tensor<BFrag, spio::DimInfo<K16, 2, 4>, spio::DimInfo<J8, 4, 1>>;
using CTile = spio::Tensor<CFrag, spio::DimInfo<I16, 2, 4>, spio::DimInfo<J8, 4, 1>>;
using SmemA = spio::Tensor<__half, spio::DimInfo<I, 32, 40>, spio::DimInfo<K, 32, 1>>;
using SmemB = spio::Tensor<__half, spio::DimInfo<K, 32, 40>, spio::DimInfo<J, 32, 1>>;
using GlobalC = spio::Tensor<float, spio::DimInfo<I, 32, 32>, spio::DimInfo<J, 32, 1>>;

extern "C" __global__ void mma_tile(const __half* a, const __half* b, float* c) {
    __shared__ __align__(16) __half smem_a[32 * 40];
    __shared__ __align__(16) __half smem_b[32 * 40];
    for (int i = threadIdx.x; i < 32 * 40; i += 32) {
        smem_a[i] = a[i];
        smem_b[i] = b[i];
    }
    __syncthreads();
    AFrag a_data[ATile::storage_size()];
    BFrag b_data[BTile::storage_size()];
    CFrag c_data[CTile::storage_size()];
    const auto a_tile = ATile(a_data);
    const auto b_tile = BTile(b_data);
    const auto c_tile = CTile(c_data);
    const int lane = spio::arch::lane_id();
    zero(c_tile);
    load_tile(a_tile, SmemA(smem_a), lane);
    load_tile_trans(b_tile, SmemB(smem_b), lane);
    mma(a_tile, b_tile, c_tile, c_tile);
    const auto global_c = GlobalC(c);
    for (auto i16 : spio::range(CTile::size<I16>())) {
        for (auto j8 : spio::range(CTile::size<J8>())) {
            for (int e = 0; e < CFrag::size(); ++e) {
                *global_c[i16][j8][CFrag::coordinates(lane, e)] = c_tile[i16][j8]->get(e);
            }
        }
    }
}
