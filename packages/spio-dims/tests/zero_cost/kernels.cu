// Typed kernels and their hand-written twins, for the zero-cost comparison (test_zero_cost.py).
//
// Each case is a pair of kernels, <case>_typed and <case>_hand, that compute the same thing:
// the typed one with spio-dims, the hand-written one with the index arithmetic a CUDA programmer
// would write. Both read the built-ins as int, as spio's CompoundIndexFrom does. The test
// compiles this file for sm_90 and requires the typed kernel's PTX to have no more instructions
// than its twin's.
#include "spio/spio.cuh"  // Dim, Fold, Tensor, CompoundIndex, range; Fragment, mma, ldmatrix

// The dimensions, as spio.dims would generate them.
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
using J16 = spio::Fold<J, 16>;
using K8 = spio::Fold<K, 8>;
using K16 = spio::Fold<K, 16>;

// --- Case compound_index (lesson 5): blockIdx.x and threadIdx.x folded into I and J of a
// 512 x 512 tensor.

using BlockIndex =
    spio::CompoundIndexFrom<spio::BlockIdxX, spio::DimInfo<I16, 32, 32>, spio::DimInfo<J16, 32, 1>>;
using ThreadIndex =
    spio::CompoundIndexFrom<spio::ThreadIdxX, spio::DimInfo<I, 16, 16>, spio::DimInfo<J, 16, 1>>;
using Lesson5A = spio::Tensor<const float, spio::DimInfo<I, 512, 512>, spio::DimInfo<J, 512, 1>>;

extern "C" __global__ void compound_index_typed(const float* a_data, float* out) {
    const auto a = Lesson5A(a_data);
    BlockIndex block;
    ThreadIndex thread;
    out[block.get() * ThreadIndex::size() + thread.get()] = *a[block][thread];
}

extern "C" __global__ void compound_index_hand(const float* a_data, float* out) {
    const int block = blockIdx.x;
    const int thread = threadIdx.x;
    const int block_i16 = block / 32;
    const int block_j16 = block % 32;
    const int thread_i = thread / 16;
    const int thread_j = thread % 16;
    const int offset = (block_i16 * 16 + thread_i) * 512 + block_j16 * 16 + thread_j;
    out[block * 256 + thread] = a_data[offset];
}

// --- Case folded_loop (lesson 3): sum over the logical K(0) ... K(31) of a K8(4) x I(4) x K(8)
// tensor; the subscript folds K into K8 and K.

using Lesson3A = spio::Tensor<const float, spio::DimInfo<K8, 4, 32>, spio::DimInfo<I, 4, 8>,
                              spio::DimInfo<K, 8, 1>>;

extern "C" __global__ void folded_loop_typed(const float* a_data, float* out) {
    const auto a = Lesson3A(a_data);
    const int thread = threadIdx.x;
    const auto i = I(thread % 4);
    float sum = 0.0f;
    for (auto k : spio::range(K(32))) sum += *a[i][k];
    out[thread] = sum;
}

extern "C" __global__ void folded_loop_hand(const float* a_data, float* out) {
    const int thread = threadIdx.x;
    const int i = thread % 4;
    float sum = 0.0f;
    for (int k = 0; k < 32; ++k) sum += a_data[(k / 8) * 32 + i * 8 + k % 8];
    out[thread] = sum;
}

// --- Case cursor_loop (lesson 2): a cursor stepped down I for a run-time number of steps.

using Lesson2A = spio::Tensor<const float, spio::DimInfo<I, 64, 128>, spio::DimInfo<J, 128, 1>>;

extern "C" __global__ void cursor_loop_typed(const float* a_data, float* out, int steps) {
    const int thread = threadIdx.x;
    auto b = Lesson2A(a_data)[I(2)][J(thread)];
    float sum = 0.0f;
    for (int step = 0; step < steps; ++step) {
        sum += *b;
        b.step(I(1));
    }
    out[thread] = sum;
}

extern "C" __global__ void cursor_loop_hand(const float* a_data, float* out, int steps) {
    const int thread = threadIdx.x;
    const float* b = a_data + 2 * 128 + thread;
    float sum = 0.0f;
    for (int step = 0; step < steps; ++step) {
        sum += *b;
        b += 128;
    }
    out[thread] = sum;
}

// --- Case projection_bounds (lesson 4): a block's tile of a 100 x 70 tensor, with world
// coordinates that also carry K; the comparison and the subscript ignore K.

using Lesson4C = spio::Tensor<float, spio::DimInfo<I, 100, 70>, spio::DimInfo<J, 70, 1>>;

extern "C" __global__ void projection_bounds_typed(float* c_data, float value) {
    const auto c = Lesson4C(c_data);
    const int block_i = blockIdx.y;
    const int block_j = blockIdx.x;
    const int thread_i = threadIdx.y;
    const int thread_j = threadIdx.x;
    const int thread_k = threadIdx.z;
    const auto origin = spio::make_coordinates(I(block_i * 8), J(block_j * 32));
    const auto world = origin + spio::make_coordinates(I(thread_i), J(thread_j), K(thread_k));
    if (world < c.extents()) *c[world] = value;
}

extern "C" __global__ void projection_bounds_hand(float* c_data, float value) {
    const int block_i = blockIdx.y;
    const int block_j = blockIdx.x;
    const int thread_i = threadIdx.y;
    const int thread_j = threadIdx.x;
    const int i = block_i * 8 + thread_i;
    const int j = block_j * 32 + thread_j;
    if (i < 100 && j < 70) c_data[i * 70 + j] = value;
}

// --- Case mma_tile: a warp's 32 x 32 x 32 f16 product from shared memory (A as I x K, B as
// J x K, both K-contiguous with rows padded to 40 elements): ldmatrix into register tiles,
// mma over them, and the f32 accumulators stored through the lane maps.

using AFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandA, __half, I, K>;
using BFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandB, __half, K, J>;
using CFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandC, float, I, J>;
using ATile = spio::Tensor<AFrag, spio::DimInfo<I16, 2, 2>, spio::DimInfo<K16, 2, 1>>;
using BTile = spio::Tensor<BFrag, spio::DimInfo<K16, 2, 4>, spio::DimInfo<J8, 4, 1>>;
using CTile = spio::Tensor<CFrag, spio::DimInfo<I16, 2, 4>, spio::DimInfo<J8, 4, 1>>;
using SmemA = spio::Tensor<const __half, spio::DimInfo<I, 32, 40>, spio::DimInfo<K, 32, 1>>;
using SmemB = spio::Tensor<const __half, spio::DimInfo<J, 32, 40>, spio::DimInfo<K, 32, 1>>;
using GlobalC = spio::Tensor<float, spio::DimInfo<I, 32, 32>, spio::DimInfo<J, 32, 1>>;

// Both kernels stage A and B in shared memory the same way.
__device__ void stage(const __half* a, const __half* b, __half* smem_a, __half* smem_b) {
    for (int i = threadIdx.x; i < 32 * 40; i += 32) {
        smem_a[i] = a[i];
        smem_b[i] = b[i];
    }
    __syncthreads();
}

extern "C" __global__ void mma_tile_typed(const __half* a, const __half* b, float* c) {
    __shared__ __align__(16) __half smem_a[32 * 40];
    __shared__ __align__(16) __half smem_b[32 * 40];
    stage(a, b, smem_a, smem_b);
    AFrag a_data[ATile::storage_size()];
    BFrag b_data[BTile::storage_size()];
    CFrag c_data[CTile::storage_size()];
    const auto a_tile = ATile(a_data);
    const auto b_tile = BTile(b_data);
    const auto c_tile = CTile(c_data);
    const int lane = spio::arch::lane_id();
    zero(c_tile);
    load_tile(a_tile, SmemA(smem_a), lane);
    load_tile(b_tile, SmemB(smem_b), lane);
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

extern "C" __global__ void mma_tile_hand(const __half* a, const __half* b, float* c) {
    __shared__ __align__(16) __half smem_a[32 * 40];
    __shared__ __align__(16) __half smem_b[32 * 40];
    stage(a, b, smem_a, smem_b);
    const int lane = spio::arch::lane_id();
    unsigned a_regs[2][2][4];
    unsigned b_regs[2][4][2];
    float c_regs[2][4][4] = {};
    for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 2; ++k) {
            const int row = i * 16 + lane % 16;
            const int col = k * 16 + (lane / 16) * 8;
            spio::arch::ldmatrix(a_regs[i][k], smem_a + row * 40 + col);
        }
    }
    for (int k = 0; k < 2; ++k) {
        for (int j = 0; j < 4; ++j) {
            const int row = j * 8 + lane % 8;
            const int col = k * 16 + (lane / 8) % 2 * 8;
            spio::arch::ldmatrix(b_regs[k][j], smem_b + row * 40 + col);
        }
    }
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 2; ++i) {
            for (int j = 0; j < 4; ++j) {
                spio::arch::mma_m16n8k16_f16(c_regs[i][j], a_regs[i][k], b_regs[k][j],
                                             c_regs[i][j]);
            }
        }
    }
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 4; ++j) {
            for (int e = 0; e < 4; ++e) {
                const int row = i * 16 + lane / 4 + 8 * (e / 2);
                const int col = j * 8 + 2 * (lane % 4) + e % 2;
                c[row * 32 + col] = c_regs[i][j][e];
            }
        }
    }
}
