// How one stream row of the wgrad kernel's walk comes into its input and grad_y rings: by
// cp.async copies (WgradRowCopies), or on sm_90 and newer with WgradConfig.tma by TMA loads
// (WgradRowTmaLoads). Part of conv2d_gw8_wgrad.cu's source,
// which includes it after conv2d_gw8_wgrad_warps.cuh; spio.kernels compiles both into one
// module (wgrad.compile_request).
//
// (Unlike fprop, the cells are located per row here: locating them once per walk, as
// conv2d_gw8_ring.cuh's locate_row_cells does, cost 6 us at 256x64x64x64, H200.) The
// block-wide copies stay beside the per-image ones: the per-image form, used for blocks of one
// image too, moved the default tile from 113 to 109 registers and 128x64x64x64 from 42 to
// 53 us.
#pragma once

// The block's rings and sources, and where the thread stands among the warp rows: what the
// copies of every row of the walk share. InputImages and GradImages are the block's group
// slice of x and grad_y (Input(x_ptr)[g], GradOutput(grad_y_ptr)[g]).
template <typename InputImages, typename GradImages>
struct WgradRowCopies {
    SmemInput smem_input;
    SmemGrad smem_grad;
    InputImages input;
    GradImages grad_y;
    // Valid addresses for the zero-filled cells' (unread) sources.
    const Element* x_ptr;
    const Element* grad_y_ptr;
    N warp_n;        // the thread's warp row
    int row_thread;  // the thread's index among its warp row's threads

    // Copies stream row J of `walk`, at `at`: input row j of its part (a step of images from
    // step_n: a part of a segment, or the block's chunk), whose output rows number `rows` and
    // whose origin is output row block_y, column block_x (input row input_y0, column
    // input_x0), with its grad_y row, or where the row carries it (WgradConfig.skip_pad_rows)
    // the next step's grad_y row 0.
    __device__ __forceinline__ void operator()(int J, const PartRow& at,
                                               const WalkPlaces& walk) const {
        const int j = at.j;
        const int rows = at.rows;
        const N step_n = at.step_n;
        const X input_x0 = at.input_x0;
        const Y block_y = at.block_y;
        const X block_x = at.block_x;
        const Y y = at.input_y0 + Y(j);
        const bool row_inside = Y(0) <= y && y < Input::size<Y>();
        if constexpr (!kSplitImages) {
            const auto input_row = smem_input[RING(J % kInputRing)];
            conv2d_gw8::for_each_cell<InputLoadIndex::size(), kThreads>(threadIdx.x, [&](int i) {
                const InputLoadIndex cell(i);
                const N n = step_n + cell.get<N>();
                const X x = input_x0 + cell.get<X>();
                const bool inside =
                    row_inside && n < Input::size<N>() && X(0) <= x && x < Input::size<X>();
                const Element* src = inside ? input[n][y][x][cell.get<G>()].get() : x_ptr;
                const auto dst = conv2d_gw8::ring_cell<kSlots>(input_row[cell.get<N>()],
                                                               cell.get<X>(), cell.get<G>());
                spio::arch::cp_async_cg_16(dst.get(), src, inside ? 16 : 0);
            });
#ifdef CONV2D_GW8_SKIP_PAD_ROWS
            if (j >= rows && !walk.carries_next_grad_row(J, j)) return;
            // The step's grad_y row j, or the next step's row 0.
            const bool next = j >= rows;
            const Y out_y = block_y + Y(next ? 0 : j);
            const N grad_n = next ? step_n + N(kStepImages) : step_n;
#else
            if (j >= rows) return;  // (as before the flag: the form above compiles otherwise)
            const Y out_y = block_y + Y(j);
            const N grad_n = step_n;
#endif
            const auto grad_row = smem_grad[RING(J % kGradRing)];
            conv2d_gw8::for_each_cell<GradLoadIndex::size(), kThreads>(threadIdx.x, [&](int i) {
                const GradLoadIndex cell(i);
                const N n = grad_n + cell.get<N>();
                const X x = block_x + cell.get<X>();
                const bool inside = n < GradOutput::size<N>() && x < GradOutput::size<X>();
                const Element* src = inside ? grad_y[n][out_y][x][cell.get<G>()].get() : grad_y_ptr;
                const auto dst = conv2d_gw8::ring_cell<kSlots>(grad_row[cell.get<N>()],
                                                               cell.get<X>(), cell.get<G>());
                spio::arch::cp_async_cg_16(dst.get(), src, inside ? 16 : 0);
            });
        } else {
            // Each warp row loads only its images' cells (it waits for them at its own
            // barrier, sync_row).
#pragma unroll
            for (int m = 0; m < kWarpImages; ++m) {
                const N image(warp_n.get() * kWarpImages + m);
                const N n = step_n + image;
                const bool image_inside = n < Input::size<N>();
                const auto input_row = smem_input[RING(J % kInputRing)][image];
                conv2d_gw8::for_each_cell<ImageInputLoadIndex::size(), kRowThreads>(
                    row_thread, [&](int i) {
                        const ImageInputLoadIndex cell(i);
                        const X x = input_x0 + cell.get<X>();
                        const bool inside =
                            row_inside && image_inside && X(0) <= x && x < Input::size<X>();
                        const Element* src = inside ? input[n][y][x][cell.get<G>()].get() : x_ptr;
                        const auto dst =
                            conv2d_gw8::ring_cell<kSlots>(input_row, cell.get<X>(), cell.get<G>());
                        spio::arch::cp_async_cg_16(dst.get(), src, inside ? 16 : 0);
                    });
#ifdef CONV2D_GW8_SKIP_PAD_ROWS
                if (j >= rows && !walk.carries_next_grad_row(J, j)) continue;
                const bool next = j >= rows;  // the next step's grad_y row 0
                const Y out_y = block_y + Y(next ? 0 : j);
                const N grad_n = next ? n + N(kStepImages) : n;
                const bool grad_inside = grad_n < GradOutput::size<N>();
#else
                if (j >= rows) continue;  // (as before the flag: the form above compiles otherwise)
                const Y out_y = block_y + Y(j);
                const N grad_n = n;
                const bool grad_inside = image_inside;
#endif
                const auto grad_row = smem_grad[RING(J % kGradRing)][image];
                conv2d_gw8::for_each_cell<ImageGradLoadIndex::size(), kRowThreads>(
                    row_thread, [&](int i) {
                        const ImageGradLoadIndex cell(i);
                        const X x = block_x + cell.get<X>();
                        const bool inside = grad_inside && x < GradOutput::size<X>();
                        const Element* src =
                            inside ? grad_y[grad_n][out_y][x][cell.get<G>()].get() : grad_y_ptr;
                        const auto dst =
                            conv2d_gw8::ring_cell<kSlots>(grad_row, cell.get<X>(), cell.get<G>());
                        spio::arch::cp_async_cg_16(dst.get(), src, inside ? 16 : 0);
                    });
            }
        }
    }
};

#ifdef CONV2D_GW8_TMA
// The TMA loads of the rows of the walk, by one thread of a sync group (the producer) into the
// group's images of each ring slot, which the slot's full barrier counts.
struct WgradRowTmaLoads {
    SmemInput smem_input;
    SmemGrad smem_grad;
    // The kernel's __grid_constant__ tensor maps of x and grad_y.
    const spio::arch::TensorMap* x_map;
    const spio::arch::TensorMap* grad_map;
    unsigned long long* bars;  // the full barriers, kInputRing a sync group
    int sync_group;
    int channel0;  // the block's first channel

    // Row J of the walk into its ring slot, for the producer's images: as
    // WgradRowCopies::operator() takes it.
    __device__ __forceinline__ void operator()(int J, const PartRow& at,
                                               const WalkPlaces& walk) const {
        const int j = at.j;
        const int slot = J % kInputRing;
        unsigned long long* const bar = &bars[sync_group * kInputRing + slot];
#ifdef CONV2D_GW8_SKIP_PAD_ROWS
        const bool next = j >= at.rows;  // with a grad_y row: the next step's row 0
        const bool grad = !next || walk.carries_next_grad_row(J, j);
#else
        constexpr bool next = false;  // (as before the flag: the form above compiles otherwise)
        const bool grad = j < at.rows;
#endif
        spio::arch::mbarrier_arrive_expect_tx(
            bar, kProducerImages * (kInputBoxBytes + (grad ? kGradBoxBytes : 0)));
#pragma unroll
        for (int i = 0; i < kProducerImages; ++i) {
            const N image(kSplitImages ? sync_group * kWarpImages + i : i);
            const int n = (at.step_n + image).get();
            spio::arch::tma_load(smem_input[RING(slot)][image].get(), x_map, bar, channel0,
                                 at.input_x0.get(), at.input_y0.get() + j, n);
            if (grad) {
                spio::arch::tma_load(smem_grad[RING(slot)][image].get(), grad_map, bar, channel0,
                                     at.block_x.get(), at.block_y.get() + (next ? 0 : j),
                                     next ? n + kStepImages : n);
            }
        }
    }
};
#endif
