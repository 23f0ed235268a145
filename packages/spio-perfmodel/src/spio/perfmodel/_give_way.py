"""Where a model's choice gives way to the heuristic's config: the heuristic runs a walk or a
tile that the models never timed, or timed otherwise than the launcher runs it, so they
cannot weigh it against their pick, and it ran faster than the picks on the GPU.

- wgrad's TMA rows (_unless_tma_tile), one-strip tiles (_unless_one_strip), walks of a
  number of steps outside the config space (_unless_untimed_walk), walks over heavy
  partial sums that a model's one-step pick would give up (_unless_heavy_walk), images
  synced on row chunks cut evenly (_unless_synced_on_even_chunks), 1 x 1 tiles in short
  chunks (_unless_pointwise_chunks) and groups per block outside the config space
  (_unless_untimed_groups);
- fprop's and dgrad's segments (_unless_segments), 16-column strips where 32-column ones
  would overhang the image (_unless_narrow_strips), groups per block outside the config
  space (_unless_untimed_fprop_groups) and 1 x 1 tiles in short walks (_unless_pointwise_walk);
- and a pick of fprop or dgrad on a filter of 3 x 3 or smaller, in strips of 16 columns or
  more, whose grid the model took for one wave, where its compiled kernel's registers make
  it more than one, unevenly (_unless_more_waves): the heuristic balanced its own waves on
  its compiled kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._choice import ConfigChoice
from ._features import GpuLimits, config_feature
from ._passes import kernel_pass

#: Computes the heuristic's config (compiling it): called only where a rule needs it.
Heuristic = Callable[[], Any]

#: The largest filter (rows x columns) whose model picks give way for their waves
#: (_unless_more_waves): 3 x 3.
SMALL_FILTER_TAPS = 9


def unless_untimed(
    choice: ConfigChoice,
    pass_name: str,
    launch: str,
    limits: GpuLimits,
    params: Conv2dGw8Params,
    device: int,
    heuristic: Heuristic,
) -> ConfigChoice:
    """choice, or the heuristic's config where one of the module's rules says. launch: how
    the model's rows were timed (LatencyModel.launch); limits: the GPU limits the model's
    features assume (LatencyModel.limits)."""
    if pass_name == "wgrad":
        from spio.kernels.conv2d_gw8 import wgrad

        # The heuristic's tile before its walk is balanced: computed once for the rules.
        tile = wgrad.default_tile_on(params, device)
        choice = _unless_tma_tile(choice, launch, tile, heuristic)
        choice = _unless_one_strip(choice, tile, heuristic)
        choice = _unless_untimed_walk(choice, tile, heuristic)
        choice = _unless_heavy_walk(choice, params, tile, heuristic)
        choice = _unless_synced_on_even_chunks(choice, launch, params, tile, heuristic)
        choice = _unless_pointwise_chunks(choice, params, tile, heuristic)
        return _unless_untimed_groups(choice, tile, heuristic)
    choice = _unless_segments(choice, pass_name, params, heuristic)
    choice = _unless_narrow_strips(choice, pass_name, params, device, heuristic)
    choice = _unless_more_waves(choice, pass_name, limits, params, device, heuristic)
    choice = _unless_untimed_fprop_groups(choice, pass_name, params, device, heuristic)
    return _unless_pointwise_walk(choice, pass_name, params, heuristic)


def _given_way(choice: ConfigChoice, heuristic: Any, why: str) -> ConfigChoice:
    return ConfigChoice(heuristic, "heuristic", f"{choice.reason}; {why}")


def _unless_segments(
    choice: ConfigChoice, pass_name: str, params: Conv2dGw8Params, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where that walks segments of the stream of rows
    (fprop and dgrad: spio-kernels' fprop_segments, where the row chunks leave the waves
    uneven) and choice's does not: the models were trained on row chunks only (segments
    are a placement field) and cannot weigh them.

    H200 (2026-11-29, `spio-perfmodel compare` before this rule, in one process): on the 9
    layer-passes of 16 where a model's pick replaced the heuristic's segments, the picks ran
    0.850-0.972x on 7 (128x64x40x40 28.21 against 23.99 us, 200x64x56x56 54.47 against
    47.20, 160x64x64x64 0.929x and 0.972x, 96x64x64x64 dgrad 0.915x) and 1.083x and 1.110x
    on 100x128x32x32: the segments 1.071x in geometric mean over the nine. Since the
    heuristic's tile there loads two rows ahead (spio-kernels' ring_depth), its segments run
    17.45 us (fprop, `compare`; the pick 18.42 in another process; forty-first session).
    Walking the pick's own tile in segments instead was about even with the heuristic's
    segments over 12 layers (tools/fprop_picks_segments_check.py: 0.905-1.128x).
    """
    from spio.kernels.conv2d_gw8 import fprop_segments
    from spio.kernels.conv2d_gw8.pass_params import fprop_kernel_params

    kernel_params = fprop_kernel_params(pass_name, params)
    if choice.config.segments or not fprop_segments.may_walk_segments(kernel_params):
        return choice  # (and the heuristic's config, which compiles, is not needed)
    config = heuristic()
    if not config.segments:
        return choice
    why = (
        f"the heuristic walks {config.segments} segments a strip here, which the models never timed"
    )
    return _given_way(choice, config, why)


def _unless_narrow_strips(
    choice: ConfigChoice, pass_name: str, params: Conv2dGw8Params, device: int, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where that narrows its strips to 16 columns because
    32-column ones would overhang the image (spio-kernels' fprop_spec.strip_columns: images
    40, 48, 72, 80 or 112 wide) and choice's strips are wider, unless choice was measured
    fastest on this very layer: 16-column tiles are in the config space, so a campaign that
    timed the layer (and the heuristic's config, which _model_or_heuristic asks of it) has
    weighed them.

    H200 (2026-11-29, `spio-perfmodel compare` on 14 layers of images 36 to 112 wide, in one
    process): where the models' pick replaced the narrowed heuristic, it ran 0.876-0.907x of
    it (128x64x48x48 fprop 25.74 against 22.80 us, dgrad 25.73 against 22.53; 32x128x44x44
    dgrad 0.907x); the models' campaigns timed few such images, and the 32-column picks
    they predict fastest there load and multiply the overhang.
    """
    import spio.jit
    from spio.kernels.conv2d_gw8 import fprop_spec
    from spio.kernels.conv2d_gw8.pass_params import fprop_kernel_params

    kernel_params = fprop_kernel_params(pass_name, params)
    narrowed = fprop_spec.strip_columns(kernel_params.q, 2 * fprop_spec.TILE_Q)
    if choice.source == "measured" or narrowed == 2 * fprop_spec.TILE_Q:
        return choice
    if choice.config.block_q <= narrowed:
        return choice
    tile = kernel_pass(pass_name).default_config(params, spio.jit.device_info(device).sm_count)
    if tile.block_q != narrowed:
        return choice
    why = (
        f"the heuristic's {narrowed}-column strips fit the image's {kernel_params.q} columns "
        f"closer than the pick's {choice.config.block_q}"
    )
    return _given_way(choice, heuristic(), why)


def _unless_more_waves(
    choice: ConfigChoice,
    pass_name: str,
    limits: GpuLimits,
    params: Conv2dGw8Params,
    device: int,
    heuristic: Heuristic,
) -> ConfigChoice:
    """choice, or the heuristic's config where choice is the model's pick of fprop or dgrad
    on a filter of at most SMALL_FILTER_TAPS taps, in strips of 16 columns or more, the
    model's features put its grid in one wave, and its compiled kernel, as the launcher
    places it, needs more than one, filling less than WAVE_FILL of their block slots.

    A model's waves count the blocks an SM holds by threads and shared memory only (the
    features come before anything compiles, _features); registers often hold fewer. Past
    one wave the last one leaves SMs idle, a cost the model cannot see where it took the
    grid for one wave; the heuristic balanced its own waves on its compiled kernel
    (spio-kernels' _tiling.balance_waves, with the same WAVE_FILL). Where the model's
    features already put the grid in several waves, it learned their cost from the
    multi-wave rows of its campaigns, and its pick stays. Compiles and loads the pick, which
    runs if it stays.

    H200 (2026-11-30, tools/model_waves_check.py, each layer in one process): the rule came
    from 96x128x32x32 3 x 3 dgrad, whose pick, FpropConfig(32, 4, 2, 1, 16, 1), is 768
    blocks of four warps that the model put at 14 an SM (0.42 waves) and that hold 5 an SM
    at its 96 registers (1.16 waves); it ran 22.39 us against the heuristic's 14.64, which
    the model predicted at 14.24 and 14.84. Then, on the other 3 x 3 layers where the rule
    changed the choice (two runs on layers it was not written from), the heuristic's config
    ran faster than the pick on all 12 other layer-passes of strips 16 or 32 columns wide,
    1.033-1.533x (24x128x64x64 dgrad 22.29 -> 14.54 us, 256x96x28x28 fprop 29.69 -> 24.51,
    96x256x28x28 fprop 1.154x). Two kinds of picks stay, as they ran faster than the
    heuristic despite their uneven waves (the heuristic's speed-ups over them below 1):
    - on images of 8 columns or fewer, whose strips of 8 columns pair images in each
      fragment: 192x512x7x7 0.916x and 0.935x, 192x512x8x8 fprop 0.985x;
    - on filters larger than 3 x 3, where the heuristic's tiles are the weaker (its ladder
      was tuned on 3 x 3 measurements): 64x128x32x32 7 x 7 and 64x512x16x16 5 x 5 dgrad,
      0.812x and 0.824x.
    """
    from spio.kernels.conv2d_gw8._tiling import FRAGMENT_PIXELS, WAVE_FILL, ceil_div, wave_fill

    if choice.source != "model":
        return choice  # a measured config ran on the layer, waves and all
    if params.r * params.s > SMALL_FILTER_TAPS or choice.config.block_q < FRAGMENT_PIXELS:
        return choice
    if config_feature(pass_name, params, choice.config, "waves", limits) > 1.0:
        return choice
    blocks, slots = compiled_grid(pass_name, params, choice.config, device)
    if wave_fill(blocks, slots) >= WAVE_FILL:
        return choice
    why = (
        f"its {blocks} blocks take {ceil_div(blocks, slots)} waves of the {slots} its compiled "
        f"kernel fits at once, filling {wave_fill(blocks, slots):.0%} of them, where the "
        "model's features count one"
    )
    return _given_way(choice, heuristic(), why)


def compiled_grid(
    pass_name: str, params: Conv2dGw8Params, config: Any, device: int
) -> tuple[int, int]:
    """The blocks of fprop's or dgrad's config as the launcher places it on device, and how
    many of them its compiled kernel fits at once (compiling and loading it)."""
    from spio.kernels.conv2d_gw8 import fprop_segments, fprop_spec, placement
    from spio.kernels.conv2d_gw8.pass_params import fprop_kernel_params

    placed = placement.placed_config_on(pass_name, params, config, device)
    kernel_params = fprop_kernel_params(pass_name, params)
    blocks = fprop_spec.grid_blocks(kernel_params, placed)
    return blocks, fprop_segments.slots_on(pass_name, params, placed, device)


def _unless_tma_tile(
    choice: ConfigChoice, launch: str, tile: Any, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where it is a wgrad tile with TMA rows (on a GPU
    with TMA, wgrad_tma_tile.tma_tile) and choice's is not, unless the model's rows timed
    each tile as the launcher runs it (launch == "launcher").

    The models were trained on tiles timed without producer warps, which the launcher gives
    only to TMA tiles and which gain them 1.06-1.08x, so they undervalue TMA tiles. From two
    H200 runs (2026-11-28, the launcher's default against choose_config's config, each in one
    process; docs/benchmarks-log.md, thirty-first session): the picks without TMA rows ran
    0.89-0.94x of the TMA heuristic at 64x128x32x32, 64x64x64x64, 32x1024x16x16 and
    128x1024x16x16 and 0.995x and 1.020x at 512x256x14x14; the picks with TMA rows ran
    1.003x and 1.04-1.07x (32x64x64x64, 256x256x14x14), and stay. With this rule, on an
    H200 the next day (thirty-second session, `spio-perfmodel compare --passes wgrad`), the
    choices ran 1.000-1.053x the heuristic's on those seven layers and 1.046x in geometric
    mean on 16 campaign layers of seed 14 (0.961-1.376x).
    """
    if choice.config.tma or launch == "launcher" or not tile.tma:
        return choice
    why = (
        "its tile has no TMA rows and the heuristic's has, which the models undervalue (they "
        "never timed producer warps)"
    )
    return _given_way(choice, heuristic(), why)


def _unless_one_strip(choice: ConfigChoice, tile: Any, heuristic: Heuristic) -> ConfigChoice:
    """choice, or the heuristic's config where its wgrad tile covers the image with one strip
    of a width outside the config space (spio-kernels' wgrad_tma_tile._one_strip_tile:
    48 columns for images 33 to 48 wide), which no model has timed: over a config measured
    fastest on the layer too, since its campaign could not time that tile.

    H200 (2026-11-29, `spio-perfmodel compare` on 14 layers, in one process): on the 9
    layers whose heuristic took the one strip and whose model's pick replaced it, the picks
    ran 0.886-0.987x of it (16x256x40x40 13.78 against 12.20 us, 32x128x44x44 14.07 against
    12.64, 128x64x48x48 23.25 against 22.42).
    """
    from spio.kernels.conv2d_gw8 import wgrad_spec

    why = f"the heuristic's tile covers the image with one {tile.block_q}-column strip"
    return _unless_untimed_value(choice, tile, heuristic, "block_q", wgrad_spec.BLOCK_Q_VALUES, why)


def _unless_untimed_walk(choice: ConfigChoice, tile: Any, heuristic: Heuristic) -> ConfigChoice:
    """choice, or the heuristic's config where its wgrad tile walks a number of steps of
    images outside the config space (spio-kernels' wgrad_tma_tile._fewest_waves: as many as
    put the grid in one wave, 3 to 32), which no model has timed; kept where choice walks as
    many.

    H200 (2026-11-30, tools/wgrad_variants_check.py, in one process each): where the shipped
    H200 model's pick had TMA rows and so ran before this rule, the heuristic's longer walks
    ran 1.057-1.29x faster than it: 1024x256x14x14 58.26 -> 52.44 us (two images, four
    steps), 160x1024x14x14 36.32 -> 34.37 (two images, 16 segments), 512x1024x10x10 73.55
    -> 57.04 (one image, 41 segments).
    """
    from spio.kernels.conv2d_gw8 import wgrad_spec

    why = f"the heuristic's tile walks {tile.walk_n} steps of images"
    return _unless_untimed_value(choice, tile, heuristic, "walk_n", wgrad_spec.WALK_N_VALUES, why)


def _unless_heavy_walk(
    choice: ConfigChoice, params: Conv2dGw8Params, tile: Any, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where its wgrad tile walks steps of images because
    one step's partial sums would be heavy (spio-kernels' wgrad_heuristic.walks_heavy_partials:
    over a quarter of the pass's bytes, on images of 4 x 4 to 10 x 10) and choice is a
    model's pick that walks one step: the models predict such picks faster than they run.

    H200 (2026-11-30, `spio-perfmodel compare` before this rule, in one process): on all 5
    layers where the shipped H200 model's one-step pick replaced the heuristic's walk of two
    steps, the pick ran slower: 128x672x7x7 11.26 against 9.33 us, 96x768x8x8 11.08 against
    9.47 (11.10 against 9.45 in another process), 512x160x7x7 0.900x, 256x160x10x10 0.910x,
    192x384x7x7 0.977x, though the model predicted them 6-22% faster. Where the model
    predicted its pick less than MIN_PREDICTED_GAIN faster, the heuristic's walk ran already
    (256x320x4x4, 128x768x4x4, 256x384x8x8, 256x192x10x10). Held out (8 of the 17 other layers
    on the grid whose pick walks one step, tools/wgrad_variants_check.py, the pick as a
    variant, the same day): 0.821-0.909x (96x768x7x7 11.24 against 9.23 us, 192x480x7x7
    0.853x, 64x672x10x10 0.870x, 384x96x10x10 0.909x). Picks that walk 2 or 4 steps of
    their own (steps the models' campaigns timed) stay; none has been timed against the
    heuristic's walk.
    """
    from spio.kernels.conv2d_gw8 import wgrad_heuristic

    if choice.source != "model" or choice.config.walk_n > 1:
        return choice
    if not wgrad_heuristic.walks_heavy_partials(params, tile):
        return choice
    why = (
        f"the heuristic's tile walks {tile.walk_n} steps of images over heavy partial sums, "
        "which the models' one-step picks run slower than they predict"
    )
    return _given_way(choice, heuristic(), why)


def _unless_synced_on_even_chunks(
    choice: ConfigChoice,
    launch: str,
    params: Conv2dGw8Params,
    tile: Any,
    heuristic: Heuristic,
) -> ConfigChoice:
    """choice, or the heuristic's config where its wgrad tile syncs its images on row chunks
    that only the launcher's even cut makes whole (spio-kernels'
    wgrad_heuristic.syncs_on_chunks_cut_evenly: the full-line tiles of layers whose groups
    are not a multiple of 8, on rows such as 48, 56, 80 and 112) and choice is another
    config a model picked, unless the model's rows timed each tile as the launcher runs it
    (launch == "launcher").

    Models of tiles timed as they are saw such a tile walk full chunks and a short last one,
    on which synced images run slow (wgrad_heuristic._with_image_sync), and so predict the
    heuristic's tile slower than the launcher runs it. H200 (2026-11-30, `spio-perfmodel
    compare` before this rule, each list in one process): on all 9 such layers where the
    shipped H200 model's pick replaced the tile, the pick ran slower: 192x160x80x80 341.58
    against 240.81 us, 32x672x80x80 235.25 against 173.14, 256x160x80x80 0.756x,
    48x160x112x112 0.777x, 128x480x80x80 0.783x, 16x480x112x112 0.827x, 48x96x48x48 0.846x
    (twice), 16x480x40x40 0.986x, and, drawn at random with 7 four-image tiles on whole
    chunks, 24x160x80x80 0.929x. Held out (three of the 181 layers of the 3 x 3 to 1 x 1
    grid the rule covers, drawn at random, tools/wgrad_variants_check.py, the pick as a
    variant): 1 x 1 32x96x80x80 32.94 against 23.66 us (0.718x), 4x672x112x112 0.789x, and
    24x160x80x80, where the pick ran 1.096x (28.62 against 31.37 us). Where the four-image
    tile's chunks are whole (images of 14 to 28 rows) the picks ran 0.984-1.099x of it and
    stay.
    """
    from spio.kernels.conv2d_gw8 import wgrad_heuristic

    if choice.source != "model" or launch == "launcher" or choice.config == tile:
        return choice
    if not wgrad_heuristic.syncs_on_chunks_cut_evenly(params, tile):
        return choice
    why = (
        f"the heuristic's tile syncs its images on {params.p} rows cut evenly from chunks of "
        f"{tile.block_p}, which the models timed with a short last chunk"
    )
    return _given_way(choice, heuristic(), why)


def _unless_pointwise_chunks(
    choice: ConfigChoice, params: Conv2dGw8Params, tile: Any, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where its wgrad tile is the 1 x 1 tile in 16-row
    chunks (spio-kernels' wgrad_pointwise.walks_pointwise_chunks: groups not a multiple of 8)
    and choice is another config a model picked.

    Many of these layers were _unless_synced_on_even_chunks' (chunks of 64 rows on 80 and
    112), whose rule no longer applies once 16-row chunks divide the rows. H200 (2026-11-30,
    `spio-perfmodel compare` before this rule, two processes): over 13 layers the shipped
    H200 model's picks ran 0.971x of the tile in geometric mean, 0.822-1.059x. The first
    six: 4x672x112x112 49.33 against 40.55 us (0.822x), 16x480x112x112 0.935x, 256x480x80x80
    0.939x, 32x224x80x80 0.963x, 96x160x64x64 0.973x, 384x160x48x48 1.034x. The seven after
    them, held out, were even (0.997x): 48x672x80x80 248.14 against 211.75 us (0.853x),
    32x224x112x112 0.986x, 8x480x80x80 and 64x96x112x112 1.004x, 192x224x48x48 1.041x,
    256x96x32x32 1.050x, 128x160x80x80 1.059x. Giving way caps the loss at 6% where the
    picks' worst cost 15-18%.
    """
    from spio.kernels.conv2d_gw8 import wgrad_pointwise

    if choice.source != "model" or choice.config == tile:
        return choice
    if not wgrad_pointwise.walks_pointwise_chunks(params, tile):
        return choice
    why = (
        f"the heuristic's 1 x 1 tile walks chunks of {tile.block_p} rows, against which the "
        "models' picks ran up to 18% slower"
    )
    return _given_way(choice, heuristic(), why)


def _unless_untimed_groups(choice: ConfigChoice, tile: Any, heuristic: Heuristic) -> ConfigChoice:
    """choice, or the heuristic's config where its wgrad tile takes a number of groups per
    block outside the config space (spio-kernels' wgrad_pixel_groups: a 1 x 1 layer's whole
    pixel, or runs of 20 or 12 groups, where the groups are not a multiple of 8), which no
    model has timed; kept where choice takes as many.

    Those tiles ran up to 1.22x faster than the four-group tile they replace on an H200
    (wgrad_pixel_groups), whose block_g the models know. On the 8 layers `spio-perfmodel
    compare` timed with this rule switched off (2026-12-01), the shipped H200 model predicted
    its picks less than MIN_PREDICTED_GAIN faster than these tiles, so the tiles ran anyway
    (1.42x cuDNN in geometric mean); but a model's prediction for a block_g it never saw is
    an extrapolation, and this keeps a pick from replacing the tile on its strength.
    """
    from spio.kernels.conv2d_gw8 import wgrad_spec

    why = f"the heuristic's tile takes {tile.block_g} groups a block"
    return _unless_untimed_value(choice, tile, heuristic, "block_g", wgrad_spec.BLOCK_G_VALUES, why)


def _unless_untimed_fprop_groups(
    choice: ConfigChoice, pass_name: str, params: Conv2dGw8Params, device: int, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where its fprop or dgrad tile takes a number of
    groups per block outside the config space (spio-kernels' fprop_pixel_groups: whole
    pixels, halves of them or runs of 20, 14 or 12 groups, where the groups are not a
    multiple of 8), which no model has timed; kept where choice takes as many.

    Those tiles ran 1.02-1.78x faster than the four-group tiles they replace on an H200
    (fprop_pixel_groups), and the models, which know only 1, 2, 4 and 8 groups a block,
    cannot weigh them: before them, 1 x 1 fprop and dgrad of 60 groups ran slower than
    cuDNN (256x480x28x28 0.90x and 0.84x).
    """
    import spio.jit
    from spio.kernels.conv2d_gw8 import fprop_spec
    from spio.kernels.conv2d_gw8.params import LINE_GROUPS

    if params.groups % LINE_GROUPS == 0:
        return choice  # the ladder's tiles of such layers keep widths of the space
    tile = kernel_pass(pass_name).default_config(params, spio.jit.device_info(device).sm_count)
    why = f"the heuristic's tile takes {tile.block_g} groups a block"
    return _unless_untimed_value(choice, tile, heuristic, "block_g", fprop_spec.BLOCK_G_VALUES, why)


def _unless_pointwise_walk(
    choice: ConfigChoice, pass_name: str, params: Conv2dGw8Params, heuristic: Heuristic
) -> ConfigChoice:
    """choice, or the heuristic's config where that is a 1 x 1 tile in short walks as many
    rows ahead as fit (spio-kernels' fprop_pointwise.pointwise_walk) and choice is another config
    a model picked.

    The models were trained on few such walks, and few of them placed as the launcher places
    them (row chunks, never segments). H200 (2026-12-01, `spio-perfmodel compare` on 8
    layers the rule had just changed, in one process): the shipped models' picks ran 0.915x
    of those walks in geometric mean for fprop (16x256x40x40 9.62 against 5.61 us,
    32x384x28x28 0.901x, the rest 0.976-0.998x) and 0.973x for dgrad (24x128x64x64 0.856x,
    32x384x28x28 0.949x); none ran faster.
    """
    from spio.kernels.conv2d_gw8.fprop_pointwise import is_pointwise_walk
    from spio.kernels.conv2d_gw8.pass_params import fprop_kernel_params

    if choice.source != "model" or (params.r, params.s) != (1, 1):
        return choice  # (and the heuristic's config, which compiles, is not needed)
    config = heuristic()
    if config == choice.config or not is_pointwise_walk(
        fprop_kernel_params(pass_name, params), config
    ):
        return choice
    why = (
        f"the heuristic's 1 x 1 tile walks {config.block_p} rows {config.prefetch} rows ahead, "
        "against which the models' picks ran up to 1.7x slower"
    )
    return _given_way(choice, config, why)


def _unless_untimed_value(
    choice: ConfigChoice,
    tile: Any,
    heuristic: Heuristic,
    field: str,
    timed: tuple[int, ...],
    what: str,
) -> ConfigChoice:
    """choice, or the heuristic's config where tile's field takes a value outside timed (the
    config space's values of it), which no model has timed, and choice's field another;
    what says what the tile does, for the reason."""
    value = getattr(tile, field)
    if value in timed or getattr(choice.config, field) == value:
        return choice
    return _given_way(choice, heuristic(), f"{what}, which the models never timed")
