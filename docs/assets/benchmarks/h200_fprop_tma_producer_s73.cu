// Experiment (seventy-third session, docs/benchmarks.md): conv2d_gw8_fprop with its input rows
// loaded by TMA from a loading warp into a ring of kTmaRing slots paced by full and empty
// mbarriers, so that the walking warps issue no loads. Chunks of whole images only (no
// segments, no paired images), fprop only; timed by h200_fprop_tma_producer_s73_check.py.
#include "types.h"

#include "conv2d_gw8_ring.cuh"
#include "spio/arch/tma.cuh"

// Each macro defaults to the first form built:
//   TMA_RING     slots of the ring (6)
//   MIN_BLOCKS   __launch_bounds__'s blocks an SM (4)
//   ALT          1: odd row chunks walk their rows bottom to top, so the rows two chunks share
//                are read at the same end of both walks (0)
//   NO_MMA       1: the mma left out, for timing only: wrong outputs (0)
//   WARP_STORES  1: each warp stages its own groups and stores them by TMA, with no block
//                barrier a row (0: the block's staging rows and 16-byte stores, as shipped)
//   SETMAXNREG   N > 0: a loading warpgroup (its first lane loads) gives its registers to the
//                walking warps, which raise theirs to N (sm_90a) (0: one loading warp)
//   STORE_WARPS  1 (with SETMAXNREG): the loading warpgroup's other three warps store the
//                staged rows, handed over by mbarriers, so the walking warps meet at no
//                barrier a row (0)
//   STAGE_BUFS   staging rows with STORE_WARPS (2)
//   WEIGHTS_SMEM 1: B fragments ldmatrix'ed from shared memory at each use (0: registers)
#ifndef TMA_RING
#define TMA_RING 6
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#ifndef ALT
#define ALT 0
#endif
#ifndef NO_MMA
#define NO_MMA 0
#endif
#ifndef WARP_STORES
#define WARP_STORES 0
#endif
#ifndef SETMAXNREG
#define SETMAXNREG 0
#endif
#ifndef STORE_WARPS
#define STORE_WARPS 0
#endif
#ifndef STAGE_BUFS
#define STAGE_BUFS 2
#endif
#ifndef WEIGHTS_SMEM
#define WEIGHTS_SMEM 0
#endif

using Element = AFrag::element_type;
using Vector = uint4;
using ElementPair =
    spio::detail::conditional_t<spio::detail::is_same_v<Element, __half>, __half2, __nv_bfloat162>;

constexpr int kRows = Weights::size<R>().get();
constexpr int kCols = Weights::size<S>().get();
constexpr int kBlockRows = BLOCK_Y::stride;
constexpr int kSlots = SmemInput::size<SLOT>().get();
constexpr int kStageRowElems = SmemOutput::storage_size() / SmemOutput::size<BUF>().get();
constexpr int kStageRows = STORE_WARPS ? STAGE_BUFS : SmemOutput::size<BUF>().get();
static_assert(!STORE_WARPS || SETMAXNREG, "the store warps are the loading warpgroup's");
constexpr int kTmaRing = TMA_RING;
constexpr int kBlockThreads = kThreads + (SETMAXNREG ? 128 : 32);
// A slot: one ring row, rounded up to the 128-byte swizzle's 1024-byte repeat.
constexpr int kRowElems = SmemInput::size<X>().get() * kSlots * 8;
constexpr int kSlotElems = (kRowElems * 2 + 1023) / 1024 * 1024 / 2;
constexpr unsigned kBoxBytes = kRowElems * 2;
constexpr int kBarrierBytes = 1024;
constexpr int kWalkersBarrier = 1;
static_assert(kSlots == 8, "the 128-byte swizzle is ring_slot at 8 groups a pixel");
static_assert(2 * kTmaRing * 8 <= kBarrierBytes, "the barriers fit their space");

__device__ __forceinline__ void sync_walkers() {
    asm volatile("bar.sync %0, %1;\n" ::"n"(kWalkersBarrier), "n"(kThreads) : "memory");
}

__device__ __forceinline__ int tap_column(int sg, int half) {
    return min(kTapsPerMma * sg + half, kCols - 1);
}

template <typename T>
__device__ __forceinline__ auto to_element_pair(const CFrag& acc, int p) {
    if constexpr (spio::detail::is_same_v<T, __half>) {
        return acc.to_half2(p);
    } else {
        return acc.to_bfloat162(p);
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads, MIN_BLOCKS)
    conv2d_gw8_fprop_tma(Element* __restrict__ y_ptr, const Element* __restrict__ x_ptr,
                         const Element* __restrict__ w_ptr, const float* __restrict__ bias_ptr,
                         const __grid_constant__ spio::arch::TensorMap x_map,
                         const __grid_constant__ spio::arch::TensorMap y_map) {
    extern __shared__ __align__(1024) unsigned char smem_base[];
    auto* const full = reinterpret_cast<unsigned long long*>(smem_base);
    auto* const empty = full + kTmaRing;
    Element* const ring = reinterpret_cast<Element*>(smem_base + kBarrierBytes);
    Element* const stage_base = ring + kTmaRing * kSlotElems;
    const auto stage_at = [&](int row) {
        return SmemOutput(stage_base + (row % kStageRows) * kStageRowElems)[BUF(0)];
    };
    const auto smem_weights = SmemWeights(stage_base + kStageRows * kStageRowElems);
    auto* const staged = empty + kTmaRing;
    auto* const freed = staged + kStageRows;

    const BlockIndex block;
    const ThreadIndex thread;
    const int lane = static_cast<int>(threadIdx.x % 32);

    const Y block_y = block.get<BLOCK_Y>().unfold();
    const X block_x = block.get<BLOCK_X>().unfold();
    const N block_n = block.get<N>();
    const auto output = Output(y_ptr)[block_n][block.get<BLOCK_G>()];
    const int rows = min(kBlockRows, Output::size<Y>().get() - block_y.get());
    const int walk_rows = rows + kRows - 1;
    const bool up = ALT && block.get<BLOCK_Y>().get() % 2 == 1;
    // Walk step J reads input row first_y + J (down) or first_y - J (up).
    const int first_y =
        up ? block_y.get() + rows - 1 + (kRows - 1 - kPadTop) : block_y.get() - kPadTop;

    if (threadIdx.x == 0) {
        if ((spio::arch::shared_address(ring) & 1023) != 0) __trap();
        for (int s = 0; s < kTmaRing; ++s) {
            spio::arch::mbarrier_init(&full[s], 1);
            spio::arch::mbarrier_init(&empty[s], kThreads / 32);
        }
        for (int b = 0; b < kStageRows; ++b) {
            spio::arch::mbarrier_init(&staged[b], kThreads / 32);
            spio::arch::mbarrier_init(&freed[b], 3);
        }
        spio::arch::mbarrier_init_fence();
    }
    __syncthreads();

    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();

    if (threadIdx.x >= kThreads) {
#if SETMAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
#endif
        // The producer warp: its first lane loads every row of the walk into the next slot as
        // soon as the walkers have let go of it.
        if (threadIdx.x == kThreads) {
            const int channel0 = block.get<BLOCK_G>().unfold().get() * 8;
            const int x0 = block_x.get() - kPadLeft;
            for (int J = 0; J < walk_rows; ++J) {
                const int s = J % kTmaRing;
                if (J >= kTmaRing) {
                    spio::arch::mbarrier_wait_parity(&empty[s], (J / kTmaRing - 1) & 1);
                }
                spio::arch::mbarrier_arrive_expect_tx(&full[s], kBoxBytes);
                spio::arch::tma_load(ring + s * kSlotElems, &x_map, &full[s], channel0, x0,
                                     up ? first_y - J : first_y + J, block_n.get());
            }
        }
#if STORE_WARPS
        // The store warps: each staged row out, in 16-byte cells covering whole pixel lines.
        if (threadIdx.x >= kThreads + 32) {
            const int tid = static_cast<int>(threadIdx.x) - (kThreads + 32);
            for (int d = 0; d < rows; ++d) {
                spio::arch::mbarrier_wait_parity(&staged[d % kStageRows], (d / kStageRows) & 1);
                const auto stage = stage_at(d);
                const int y = up ? block_y.get() + rows - 1 - d : block_y.get() + d;
                const auto output_row = output[Y(y)][block_x];
                conv2d_gw8::for_each_cell<StoreIndex::size(), 96>(tid, [&](int i) {
                    const StoreIndex cell(i);
                    if (block_x + cell.get<X>() < Output::size<X>()) {
                        const auto from =
                            conv2d_gw8::ring_cell<kSlots>(stage, cell.get<X>(), cell.get<G>());
                        *reinterpret_cast<Vector*>(output_row[cell].get()) =
                            *reinterpret_cast<const Vector*>(from.get());
                    }
                });
                __syncwarp();
                if (lane == 0) spio::arch::mbarrier_arrive(&freed[d % kStageRows]);
            }
        }
#endif
        return;
    }

#if SETMAXNREG
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(SETMAXNREG) : "memory");
#endif
    const auto block_weights = Weights(w_ptr)[block.get<BLOCK_G>()];
    conv2d_gw8::for_each_cell<WeightLoadIndex::size(), kThreads>(threadIdx.x, [&](int i) {
        const WeightLoadIndex cell(i);
        spio::arch::cp_async_cg_16(smem_weights[cell].get(), block_weights[cell].get(), 16);
    });
    spio::arch::cp_async_commit_group();

    CFrag bias_data[BiasTile::storage_size()];
    const auto bias = BiasTile(bias_data);
    const auto warp_bias = Bias(bias_ptr)[block.get<BLOCK_G>()][thread];
#pragma unroll
    for (auto g : spio::range(WeightTile::size<G>())) {
#pragma unroll
        for (int e = 0; e < CFrag::size(); ++e) {
            bias[g]->set(e, kHasBias ? *warp_bias[g][CFrag::col(lane, e)] : 0.0f);
        }
    }
    spio::arch::cp_async_wait_group<0>();
    sync_walkers();
    const auto warp_weights = smem_weights[thread];
    // Tap (g, r, sg)'s B fragment. An upward walk is a downward one of the image and filter
    // flipped top to bottom: its tap row r is the layer's R - 1 - r.
    const auto load_weights = [&](BFrag& b, G g, R r, SG sg) {
        const R layer_r = up ? R(kRows - 1) - r : r;
        const auto origin = BFrag::ldmatrix_origin(lane);
        const int tc = origin.get<TC>().get();
        const S s(tap_column(sg.get(), tc / 8));
        b.load(warp_weights[g][layer_r][s][origin.get<K>()][C(tc % 8)].get());
        if (kTapsPerMma * (sg.get() + 1) > kCols) {
            b.regs()[BFrag::num_registers() - 1] = 0;
        }
    };
#if !WEIGHTS_SMEM
    BFrag weight_data[WeightTile::storage_size()];
    const auto weights = WeightTile(weight_data);
#pragma unroll
    for (auto g : spio::range(WeightTile::size<G>())) {
#pragma unroll
        for (auto r : spio::range(WeightTile::size<R>())) {
#pragma unroll
            for (auto sg : spio::range(WeightTile::size<SG>())) {
                load_weights(*weights[g][r][sg], g, r, sg);
            }
        }
    }
#endif

    AFrag a_data[ATile::storage_size()];
    CFrag acc_data[AccTile::storage_size()];
    const auto a_tile = ATile(a_data);
    const auto acc = AccTile(acc_data);
    const X warp_x = thread.get<WARP_X>().unfold();
    const G warp_g = thread.get<WARP_G>().unfold();
    const X lane_x = AFrag::ldmatrix_origin(lane).get<X>();
    const int lane_half = AFrag::ldmatrix_origin(lane).get<TC>().get() / 8;

    const auto stage_row = [&](int row, BAND band) {
#if STORE_WARPS
        if (row >= kStageRows) {
            spio::arch::mbarrier_wait_parity(&freed[row % kStageRows], (row / kStageRows - 1) & 1);
        }
#endif
        const auto stage = stage_at(row);
#pragma unroll
        for (auto g : spio::range(AccTile::size<G>())) {
#pragma unroll
            for (auto x16 : spio::range(AccTile::size<X16>())) {
#pragma unroll
                for (int p = 0; p < CFrag::size() / 2; ++p) {
                    const auto at = CFrag::coordinates(lane, 2 * p);
                    const X x = warp_x + X(16 * x16.get()) + at.get<X>();
                    const auto cell = conv2d_gw8::ring_cell<kSlots>(stage, x, warp_g + g);
                    *reinterpret_cast<ElementPair*>(cell[at.get<K>()].get()) =
                        to_element_pair<Element>(*acc[band][g][x16], p);
                }
            }
        }
#if STORE_WARPS
        __syncwarp();
        if (lane == 0) spio::arch::mbarrier_arrive(&staged[row % kStageRows]);
#endif
    };
    // Walk row `row` of the chunk is output row block_y + row, or counted from the bottom
    // when walking up.
    const auto store_staged_row = [&](int row) {
        const auto stage = stage_at(row);
        const int y = up ? block_y.get() + rows - 1 - row : block_y.get() + row;
        const auto output_row = output[Y(y)][block_x];
        conv2d_gw8::for_each_cell<StoreIndex::size(), kThreads>(threadIdx.x, [&](int i) {
            const StoreIndex cell(i);
            if (block_x + cell.get<X>() < Output::size<X>()) {
                const auto from =
                    conv2d_gw8::ring_cell<kSlots>(stage, cell.get<X>(), cell.get<G>());
                *reinterpret_cast<Vector*>(output_row[cell].get()) =
                    *reinterpret_cast<const Vector*>(from.get());
            }
        });
    };

#if WARP_STORES
    // Each warp's two staging rows: its 32 columns x 2 groups (32 bytes a pixel, swizzled as
    // TMA's 32-byte swizzle: ring_slot<2>), 1 KB each, in the block's staging space.
    constexpr int kWarpGroups = AccTile::size<G>().get();
    constexpr int kWarpCols = WARP_X::stride;
    constexpr int kWarpStageElems = kWarpCols * kWarpGroups * 8;
    static_assert(kWarpGroups == 2 && kWarpStageElems * 2 % 256 == 0, "32-byte swizzle rows");
    const int warp = static_cast<int>(threadIdx.x / 32);
    Element* const warp_stage = ring + kTmaRing * kSlotElems + warp * 2 * kWarpStageElems;
    const auto warp_stage_row = [&](int row, BAND band) {
        if (lane == 0) spio::arch::bulk_wait_group_read<1>();
        __syncwarp();
        Element* const stage = warp_stage + (row % 2) * kWarpStageElems;
#pragma unroll
        for (auto g : spio::range(AccTile::size<G>())) {
#pragma unroll
            for (auto x16 : spio::range(AccTile::size<X16>())) {
#pragma unroll
                for (int p = 0; p < CFrag::size() / 2; ++p) {
                    const auto at = CFrag::coordinates(lane, 2 * p);
                    const int x = 16 * x16.get() + at.get<X>().get();
                    const int slot = conv2d_gw8::ring_slot<2>(x, g.get());
                    *reinterpret_cast<ElementPair*>(stage + (x * 2 + slot) * 8 +
                                                    at.get<K>().get()) =
                        to_element_pair<Element>(*acc[band][g][x16], p);
                }
            }
        }
        spio::arch::fence_proxy_async_shared();
        __syncwarp();
        if (lane == 0) {
            const int y = up ? block_y.get() + rows - 1 - row : block_y.get() + row;
            spio::arch::tma_store(&y_map, stage, (block.get<BLOCK_G>().unfold() + warp_g).get() * 8,
                                  (block_x + warp_x).get(), y, block_n.get());
            spio::arch::bulk_commit_group();
        }
    };
#endif
    const int input_rows = walk_rows;
    for (int j0 = 0; j0 < input_rows; j0 += kRows) {
#pragma unroll
        for (int t = 0; t < kRows; ++t) {
            const int j = j0 + t;
            if (j >= input_rows) break;
            const int s = j % kTmaRing;
            spio::arch::mbarrier_wait_parity(&full[s], (j / kTmaRing) & 1);
#if !WARP_STORES && !STORE_WARPS
            // The staging rows' hand-over (the ring's is the mbarriers').
            sync_walkers();

            const int staged = j - kRows;
            if (staged >= 0 && staged < rows) store_staged_row(staged);
#endif

            if (j < rows) {
#pragma unroll
                for (auto g : spio::range(AccTile::size<G>())) {
#pragma unroll
                    for (auto x16 : spio::range(AccTile::size<X16>())) {
                        *acc[BAND(t)][g][x16] = *bias[g];
                    }
                }
            }
            const auto ring_row = SmemInput(ring + s * kSlotElems)[RING(0)];
#pragma unroll
            for (auto sg : spio::range(WeightTile::size<SG>())) {
                const X sx(tap_column(sg.get(), lane_half));
#pragma unroll
                for (auto g : spio::range(AccTile::size<G>())) {
#pragma unroll
                    for (auto x16 : spio::range(ATile::size<X16>())) {
                        const X x = warp_x + X(16 * x16.get()) + lane_x + sx;
                        a_tile[x16]->load(
                            conv2d_gw8::ring_cell<kSlots>(ring_row, x, warp_g + g).get());
                    }
#pragma unroll
                    for (auto r : spio::range(WeightTile::size<R>())) {
                        const int row = j - r.get();
                        if (row < 0 || row >= rows) continue;
                        const BAND band((t - r.get() + kRows) % kRows);
#if WEIGHTS_SMEM
                        BFrag b;
                        load_weights(b, g, r, sg);
#endif
#pragma unroll
                        for (auto x16 : spio::range(AccTile::size<X16>())) {
#if NO_MMA
                            acc[band][g][x16]->regs()[0] += __int_as_float(a_tile[x16]->regs()[0]);
#elif WEIGHTS_SMEM
                            mma(*a_tile[x16], b, *acc[band][g][x16], *acc[band][g][x16]);
#else
                            mma(*a_tile[x16], *weights[g][r][sg], *acc[band][g][x16],
                                *acc[band][g][x16]);
#endif
                        }
                    }
                }
            }
            // This warp is done with slot s.
            __syncwarp();
            if (lane == 0) spio::arch::mbarrier_arrive(&empty[s]);

            const int done = j - (kRows - 1);
#if WARP_STORES
            if (done >= 0 && done < rows) warp_stage_row(done, BAND((t + 1) % kRows));
#else
            if (done >= 0 && done < rows) stage_row(done, BAND((t + 1) % kRows));
#endif
        }
    }
#if WARP_STORES
    if (lane == 0) spio::arch::bulk_wait_group<0>();
#elif !STORE_WARPS
    sync_walkers();
    store_staged_row(rows - 1);
#endif
}
