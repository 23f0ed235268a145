// What both matmul kernels (matmul.cu, mma.sync; matmul_wgmma.cu, wgmma) share: the blocks'
// order over C's tiles, block-wide copy loops, and the epilogue that adds the bias, stages C's
// tile swizzled in shared memory and stores it as whole 16-byte vectors.
//
// Needs, from the kernel's types.h: BLOCK_I, BLOCK_J, C_SLAB, C, SmemC, SwizzleC, CStoreIndex,
// CFrag, kM, kN, kTilesM, kTilesN, kGroupM, kThreads, and Bias with SPIO_MATMUL_BIAS; and
// Element, the 16-bit element type.
#pragma once

using Vector = uint4;  // 16 bytes: 8 elements of one row
using ElementPair =
    spio::detail::conditional_t<spio::detail::is_same_v<Element, __half>, __half2, __nv_bfloat162>;

// The block's tile of C. Blocks run over the tiles in groups of kGroupM tile rows, down each
// group's rows before its next column, so that the blocks running at once share A's rows and
// B's columns in L2.
struct BlockTile {
    BLOCK_I i;
    BLOCK_J j;
};

__device__ __forceinline__ BlockTile block_tile(int block) {
    constexpr int kPerGroup = kGroupM * kTilesN;
    const int first_row = block / kPerGroup * kGroupM;
    const int rows = min(kTilesM - first_row, kGroupM);
    const int in_group = block % kPerGroup;
    return {BLOCK_I(first_row + in_group % rows), BLOCK_J(in_group / rows)};
}

// Run f(i) for i = threadIdx.x, threadIdx.x + kThreads, ... below Count: each thread's share
// of a block-wide copy.
template <int Count, typename F>
__device__ __forceinline__ void for_each_cell(F f) {
#pragma unroll
    for (int step = 0; step < (Count + kThreads - 1) / kThreads; ++step) {
        const int i = static_cast<int>(threadIdx.x) + step * kThreads;
        if (Count % kThreads == 0 || i < Count) f(i);
    }
}

// The rows within a swizzle slab of Rows rows, and the slab: row - slab.
template <int Rows, typename D>
__device__ __forceinline__ D within(D value) {
    return value - value.template fold<Rows>();
}

// Two neighbouring accumulators rounded to the element type T.
template <typename T = Element>
__device__ __forceinline__ auto to_element_pair(float low, float high) {
    if constexpr (spio::detail::is_same_v<T, __half>) {
        // Case: f16 output.
        return spio::arch::to_half2(low, high);
    } else {
        // Case: bf16 output.
        return spio::arch::to_bfloat162(low, high);
    }
}

// The staged tile's 16-byte cell of C's (row, column 8 * cell) within the block's tile.
__device__ __forceinline__ Vector* staged_cell(const SmemC& smem_c, I row, J8 cell) {
    return smem_c[cell.fold<C_SLAB::stride>()][row.fold<8>()]
                 [SwizzleC(within<8>(row), within<C_SLAB::stride>(cell))]
                     .get();
}

// A packed pair of 16-bit elements as two floats.
__device__ __forceinline__ float2 to_float2(__half2 pair) { return __half22float2(pair); }
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 pair) {
    return __bfloat1622float2(pair);
}

// The bias of the block's columns: with SPIO_MATMUL_BIAS the kernel adds a vector of kN
// elements (the generated Bias) to every row of C, each accumulator getting its column's value
// in float32 before it rounds, as torch's addmm does; without it, ptr is unused and the
// epilogue has no code for it.
struct TileBias {
    const Element* ptr;
    BLOCK_J block_j;
};

// Add the bias of the block's columns col and col + 1 to (low, high).
__device__ __forceinline__ void add_bias(float& low, float& high, const TileBias& bias, J col) {
#ifdef SPIO_MATMUL_BIAS
    const J column = bias.block_j.unfold() + col;
    // col is even and kN a multiple of 8: the pair lies inside C, or past its edge where
    // nothing is stored.
    if (column < J(kN)) {
        const float2 values =
            to_float2(*reinterpret_cast<const ElementPair*>(Bias(bias.ptr)[column].get()));
        low += values.x;
        high += values.y;
    }
#endif
}

// Stage accumulator pair p of an m16n8 C fragment whose first row and column in the block's
// tile are (row0, col0): (low, high) plus their columns' bias, rounded to Element.
__device__ __forceinline__ void stage_pair(const SmemC& smem_c, I row0, J col0, int lane, int p,
                                           float low, float high, const TileBias& bias) {
    const auto at = CFrag::coordinates(lane, 2 * p);  // (I, J) in the fragment
    const I row = row0 + at.get<I>();
    const J col = col0 + at.get<J>();
    add_bias(low, high, bias, col);
    reinterpret_cast<ElementPair*>(staged_cell(
        smem_c, row, col.fold<8>()))[within<8>(col).get() / 2] = to_element_pair(low, high);
}

// Store the staged tile to C (rows and columns past C's edges are not written). The block
// meets first, so every thread's staged pairs are in.
__device__ __forceinline__ void store_staged_tile(Vector* c_ptr, const SmemC& smem_c,
                                                  BlockTile tile) {
    __syncthreads();
    const auto c = C(c_ptr);
    for_each_cell<CStoreIndex::size()>([&](int i) {
        const CStoreIndex cell(i);
        const I row = tile.i + cell.get<I>();
        const J8 col = tile.j + cell.get<J8>();
        if (row < I(kM) && col < J8(kN / 8)) {
            *c[row][col] = *staged_cell(smem_c, cell.get<I>(), cell.get<J8>());
        }
    });
}
