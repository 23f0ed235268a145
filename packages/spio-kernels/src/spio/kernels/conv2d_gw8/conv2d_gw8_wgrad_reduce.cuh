// The wgrad reduce kernels: the partial sums that conv2d_gw8_wgrad writes, one per block,
// added up in a fixed order into grad_w (f32, or rounded to the activations' type) and, with
// CONV2D_GW8_BIAS_GRAD, the bias gradient; with CONV2D_GW8_ATOMIC_SUMS the kernel that
// clears the one sum the blocks add into instead. Part of conv2d_gw8_wgrad.cu's source, which
// includes it after its own definitions (types.h, Element, add_to); spio.kernels compiles
// both into one module (wgrad.compile_request).
#pragma once

#ifdef CONV2D_GW8_DISCARD_PARTIALS
#include "spio/arch/l2.cuh"  // discard_line, kL2LineBytes

// 16-byte cells of weights in one 128-byte line: a reduce block's cells start on a line and
// cover whole lines (kReduceCells is a power of two of at least 8), as does each partial sum.
constexpr int kCellsPerLine = spio::arch::kL2LineBytes / 16;
static_assert(kReduceCells % kCellsPerLine == 0 && (kWeights / 4) % kCellsPerLine == 0,
              "reduce blocks and partial sums are whole lines of cells");
#endif

// grad_w[w] = sum over partials j = 0, 1, ... of partials[j][w], the same order on every run:
// thread (slice, cell) adds j = slice, slice + kReduceSlices, ... of one 16-byte cell of 4
// weights (neighbouring cells of a slice cover whole 128-byte lines), then one thread per cell
// adds the slices in order and hands the cell's 4 sums to store(cell, sums); with
// CONV2D_GW8_BIAS_GRAD the cells past the weights' are the bias gradient's, written to
// grad_bias (unused without). The kernel is latency-bound (the partials sit in L2): many
// slices and loads issued kReduceBatch at a time keep each thread's loads in flight together.
// (The bias's loops repeat the weights' rather than share a helper with them: the helper
// changed the SASS of the reduction without a bias, whose timings train the models.)
template <typename Store>
__device__ __forceinline__ void reduce_partials(const float* __restrict__ partials, Store store,
                                                float* __restrict__ grad_bias) {
    __shared__ float4 slice_sums[kReduceSlices][kReduceCells];
    const ReduceThread thread;
    const int slice = thread.get<SLICE>().get();
    const int block_cell = thread.get<CELL>().get();
    const int cell = blockIdx.x * kReduceCells + block_cell;
    constexpr int kCells = kWeights / 4;
    const auto* const cells = reinterpret_cast<const float4*>(partials);
    // Launched right behind the main kernel with programmatic dependent launch: its blocks
    // wait here for the partial sums.
    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (cell < kCells) {
        constexpr int kLoads = (kPartials + kReduceSlices - 1) / kReduceSlices;
#pragma unroll kReduceBatch
        for (int k = 0; k < kLoads; ++k) {
            const int j = slice + k * kReduceSlices;
            if (j < kPartials) add_to(sum, cells[static_cast<long long>(j) * kCells + cell]);
        }
    }
#ifdef CONV2D_GW8_BIAS_GRAD
    // The bias gradient's partial sums follow the weights'.
    else if (cell < kCells + kBiasCells) {
        const float4* const bias_cells = cells + static_cast<long long>(kPartials) * kCells;
        constexpr int kLoads = (kPartials + kReduceSlices - 1) / kReduceSlices;
#pragma unroll kReduceBatch
        for (int k = 0; k < kLoads; ++k) {
            const int j = slice + k * kReduceSlices;
            if (j < kPartials) {
                add_to(sum, bias_cells[static_cast<long long>(j) * kBiasCells + cell - kCells]);
            }
        }
    }
#endif
#ifdef CONV2D_GW8_DISCARD_PARTIALS
    // WgradConfig.discard_partials: every 128-byte line of the weights' partial sums is dead
    // once its 8 cells (8 threads of one slice, one warp) are read; dropped from L2, it is
    // never written back to DRAM by a later eviction. Only where the workspace starts on a
    // line: otherwise the first and last lines hold other data too.
    __syncwarp();
    if (cell < kCells && block_cell % kCellsPerLine == 0 &&
        reinterpret_cast<unsigned long long>(partials) % spio::arch::kL2LineBytes == 0) {
        constexpr int kLoads = (kPartials + kReduceSlices - 1) / kReduceSlices;
        for (int k = 0; k < kLoads; ++k) {
            const int j = slice + k * kReduceSlices;
            if (j < kPartials) {
                spio::arch::discard_line(&cells[static_cast<long long>(j) * kCells + cell]);
            }
        }
    }
#endif
    slice_sums[slice][block_cell] = sum;
    __syncthreads();
    if (slice == 0 && cell < kCells) {
        float4 total = slice_sums[0][block_cell];
#pragma unroll
        for (int k = 1; k < kReduceSlices; ++k) add_to(total, slice_sums[k][block_cell]);
        store(cell, total);
    }
#ifdef CONV2D_GW8_BIAS_GRAD
    else if (slice == 0 && cell < kCells + kBiasCells) {
        float4 total = slice_sums[0][block_cell];
#pragma unroll
        for (int k = 1; k < kReduceSlices; ++k) add_to(total, slice_sums[k][block_cell]);
        reinterpret_cast<float4*>(grad_bias)[cell - kCells] = total;
    }
#endif
}

extern "C" __global__ void __launch_bounds__(kReduceCells* kReduceSlices)
    conv2d_gw8_wgrad_reduce(float* __restrict__ grad_w, const float* __restrict__ partials,
                            float* __restrict__ grad_bias) {
    reduce_partials(
        partials,
        [&](int cell, const float4& total) { reinterpret_cast<float4*>(grad_w)[cell] = total; },
        grad_bias);
}

#ifdef CONV2D_GW8_ATOMIC_SUMS
// WgradConfig.atomic_sums: clears the one sum that every block of the main kernel adds into
// (grad_w itself, or the workspace: kZeroCells 16-byte cells of weights, then of the bias
// gradient). Launched right before the main kernel, whose blocks wait for it to finish.
extern "C" __global__ void __launch_bounds__(kReduceCells* kReduceSlices)
    conv2d_gw8_wgrad_zero(float* __restrict__ sums) {
    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();  // the kernel before may still read the sums
    const int cell = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (cell < kZeroCells) {
        reinterpret_cast<float4*>(sums)[cell] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}
#endif

// Two neighbouring weights rounded to the activations' type (to nearest even), the first in
// the low half.
__device__ __forceinline__ unsigned to_element_pair(float lo, float hi) {
    if constexpr (spio::detail::is_same_v<Element, __half>) {
        return spio::arch::as_register(spio::arch::to_half2(lo, hi));
    } else {
        return spio::arch::as_register(spio::arch::to_bfloat162(lo, hi));
    }
}

// The same sums as conv2d_gw8_wgrad_reduce, each rounded once to the activations' type
// (fp16 or bf16, to nearest even): the weight gradient a training step keeps, the same bits
// as conv2d_gw8_wgrad_reduce's f32 sums cast afterwards, without the f32 array or the cast's
// launch.
extern "C" __global__ void __launch_bounds__(kReduceCells* kReduceSlices)
    conv2d_gw8_wgrad_reduce_to_element(Element* __restrict__ grad_w,
                                       const float* __restrict__ partials,
                                       float* __restrict__ grad_bias) {
    reduce_partials(
        partials,
        [&](int cell, const float4& total) {
            reinterpret_cast<uint2*>(grad_w)[cell] =
                make_uint2(to_element_pair(total.x, total.y), to_element_pair(total.z, total.w));
        },
        grad_bias);
}
