// The wgrad kernel's block as its types header shapes it (wgrad_types): the generated tiles'
// sizes named and checked against what the walk assumes, the slabs' padding, and, with a
// bias, its sums' cells and the helper that adds a grad_y fragment into them. Part of
// conv2d_gw8_wgrad.cu's source, which includes it after types.h; spio.kernels compiles both
// into one module (wgrad.compile_request).
#pragma once

using Element = TapFrag::element_type;

constexpr int kPairs = AccTile::size<PAIR>().get();
constexpr int kBlockRows = BLOCK_Y::stride;
constexpr int kInputRing = SmemInput::size<RING>().get();
constexpr int kGradRing = SmemGrad::size<RING>().get();
constexpr int kSlots = SmemInput::size<SLOT>().get();     // groups per pixel of a ring row
constexpr int kStepImages = SmemInput::size<N>().get();   // images walked side by side
constexpr int kWarpRows = SmemPartials::size<N>().get();  // rows of warps, kWarpImages each

static_assert(Input::size<C>().get() == 8 && GradOutput::size<K>().get() == 8,
              "a group is 8 input channels and 8 output channels");
static_assert(Input::size<G>() == GradOutput::size<G>() && Partials::size<G>() == Input::size<G>(),
              "input, grad_y and the weights have the same groups");
static_assert(kInputRing == kPrefetch + 2 && kGradRing == kPrefetch + 2,
              "each ring holds its row in use, kPrefetch loading and one retiring");
static_assert(kColumnPairs == (kCols + 1) / 2 && kPairs == kRows * kColumnPairs,
              "an accumulator per filter row and pair of filter columns");
static_assert(GradTile::size<BAND>().get() == kRows, "grad_y fragments of the last R rows");
static_assert(SmemInput::size<X>().get() >= BLOCK_X::stride + kCols - 1,
              "an input ring row holds the block's columns plus the S - 1 halo");
static_assert(WARP_X::stride == 16, "a warp owns the 16 pixels of one m16n8k16 K step");
static_assert(ThreadIndex::size() == kThreads, "the block has one thread per thread index");
static_assert(kStepImages == kWarpRows * kWarpImages && kWarpRows <= 15,
              "each warp row owns kWarpImages images; named barriers 1 ... 15");
static_assert(kWarpImages == 1 || kWarpImages * BLOCK_X::stride == 16,
              "a K step spans several images as 16 / kWarpImages columns of each");
// WgradConfig.padded_slabs (types.h defines CONV2D_GW8_SLAB_PAD): floats after each output
// channel's weights in a slab of partial sums.
#ifdef CONV2D_GW8_SLAB_PAD
constexpr int kSlabPad = CONV2D_GW8_SLAB_PAD;
#else
constexpr int kSlabPad = 0;
#endif
static_assert((PartialCellIndex::size() * 4 + SmemPartials::size<G>().get() * 8 * kSlabPad) *
                          SmemPartials::size<N>().get() * SmemPartials::size<WARP_X>().get() -
                      kSlabPad ==
                  SmemPartials::storage_size(),
              "each slab of the block's weights is whole 16-byte cells of 4 input channels, "
              "and kSlabPad floats after each output channel's but the last");
static_assert(ReduceThread::size() == kReduceCells * kReduceSlices,
              "the reduce block has one thread per (slice, cell of 4 weights)");
static_assert(kWeights % 4 == 0, "grad_w is whole 16-byte cells (8 input channels per tap)");
#ifdef CONV2D_GW8_BIAS_GRAD
// The layer's bias gradient (Conv2dGw8Params.has_bias; types.h defines CONV2D_GW8_BIAS_GRAD):
// grad_b[g][k] = sum over (n, y, x) of grad_y[n][y][x][g][k]. Each grad_y element reaches
// exactly one warp's B fragment once (the blocks and their warps tile grad_y; halo rows have
// none), so the walk adds each fragment's elements in f32 to its lane's sum of the fragment's
// output channel; after the walk the quads of lanes, then the warps in a fixed order, add
// theirs, and each block writes its sums after the weights' partial sums, which the reduce
// kernels add up with the weights'.
static_assert(BlockChannelIndex::size() == SmemPartials::size<G>().get() * 8,
              "a thread per output channel of the block's groups");
static_assert(kBiasCells * 4 == Input::size<G>().get() * 8, "the bias gradient's 16-byte cells");

// sum += frag's elements, in order, in f32.
__device__ __forceinline__ void add_elements(float& sum, const GradFrag& frag) {
#pragma unroll
    for (int e = 0; e < GradFrag::size(); ++e) sum += static_cast<float>(frag.get(e));
}
#endif
