"""Choosing the config a layer's pass runs with: a shipped latency model where one fits, else
the kernels' heuristic.

A shipped model is used when it was trained on the GPU the layer runs on (by name) and on
the kernels installed now (their sources digest): a model of other kernels, or of another
GPU, describes a different machine. Everywhere else the heuristic decides, the config the
kernel entries run without one (`default_config_on`).

On a layer the model was trained on, the fastest config measured there is used, where the
heuristic's config was among those timed there. Elsewhere a model's pick replaces the
heuristic's config only where the model predicts it at least MIN_PREDICTED_GAIN faster.
Below that the prediction is less certain than the gain: on the H200, on the targets'
layers (whose heuristics were tuned on measurements), picks predicted 0.1-2.5% faster ran up
to 4% slower, while on 13 layers no model had seen the same threshold kept the whole
geometric-mean gain (docs/perfmodel). A pick does not replace a heuristic config that walks
or tiles in a way the models never timed or mispredict (_give_way): wgrad's TMA rows (on a
GPU with TMA), one-strip tiles, walks over heavy partial sums and images synced on rows cut
evenly, fprop's and dgrad's segments and narrowed strips. The selection mode
(_selection_mode: SPIO_CONFIG_SELECTION or set_selection_mode) "heuristic" turns the models
off; "model" (the default) uses them where they fit; "autotune" times the fitting model's
shortlist on the device at a layer's first call of each pass and runs the fastest
(`tune_config`, _autotune).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from spio.kernels.conv2d_gw8 import placement, wgrad_spec
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._autotune import (
    AUTOTUNE_CANDIDATES,
    COMPILE_THREADS,
    PROXY_CANDIDATES,
    candidates,
    time_configs,
)
from ._choice import ConfigChoice
from ._give_way import unless_untimed
from ._model import LatencyModel
from ._passes import kernel_pass
from ._selection_mode import SELECTIONS, mode_origin, normalized_mode, selection_mode
from ._shipped import shipped_model, shipped_models
from ._tunings import load_tuning, store_tuning, tuning_key

#: The predicted speed-up over the heuristic's config a model's pick needs to be used.
MIN_PREDICTED_GAIN = 0.03


def _heuristics() -> dict[str, Callable[[Conv2dGw8Params, int], Any]]:
    from spio.kernels.conv2d_gw8 import dgrad, fprop, wgrad

    return {
        "fprop": fprop.default_config_on,
        "dgrad": dgrad.default_config_on,
        "wgrad": wgrad.default_config_on,
    }


def _walks() -> dict[str, Callable[[Conv2dGw8Params, Any, int], list[Any]]]:
    """The configs a tuning times for each shortlisted config of each pass: wgrad's tile in
    its row chunks, its segments and its segments with deeper prefetch (wgrad_walks.walks_on:
    which is fastest follows no rule across layers); fprop's and dgrad's config in its row
    chunks and, on images of 32 rows or more, its tile in one wave of segments
    (fprop_segments.walks_on: the models know row chunks only)."""
    from spio.kernels.conv2d_gw8 import fprop_segments, wgrad_walks

    def fprop_walks(params: Conv2dGw8Params, config: Any, device: int) -> list[Any]:
        return fprop_segments.walks_on("fprop", params, config, device)

    def dgrad_walks(params: Conv2dGw8Params, config: Any, device: int) -> list[Any]:
        return fprop_segments.walks_on("dgrad", params, config, device)

    return {"fprop": fprop_walks, "dgrad": dgrad_walks, "wgrad": wgrad_walks.walks_on}


#: wgrad's placement flags a placed config may set, and what _placed's reason says of each.
_PLACED_FLAGS = (
    ("producer", "loads its rows from producer warps"),
    ("padded_slabs", "pads its slabs of partial sums"),
    ("lane_registers", "keeps its lanes' addresses in registers"),
    ("skip_pad_rows", "leaves out its padding rows"),
    ("discard_partials", "drops its partial sums from L2 once added up"),
)


def _placed(
    choice: ConfigChoice, pass_name: str, params: Conv2dGw8Params, device: int
) -> ConfigChoice:
    if choice.source == "autotune":
        return choice  # timed on the device walking as it will: no rule overrides that
    # What the launcher runs for the tile (placement.placed_config_on): every pass cuts the
    # image's rows into even chunks; wgrad walks segments where its waves would leave SMs
    # idle and takes the kernel's improvements that no model knows (a model scores tiles,
    # what it was trained on).
    config = placement.placed_config_on(pass_name, params, choice.config, device)
    if config == choice.config:
        return choice
    placed = []
    if config.block_p != choice.config.block_p and not config.segments:
        placed.append(f"cuts the image's rows into even chunks of {config.block_p}")
    if config.segments != choice.config.segments:
        placed.append(f"walks {config.segments} segments a strip")
    for flag, what in _PLACED_FLAGS:
        # (wgrad's placement fields; fprop's and dgrad's configs have none of them)
        if getattr(config, flag, False) != getattr(choice.config, flag, False):
            placed.append(what)
    reason = f"{choice.reason}; on this GPU its tile {' and '.join(placed)} (placed_config_on)"
    return ConfigChoice(config, choice.source, reason)


def heuristic_config(pass_name: str, params: Conv2dGw8Params, device: int = 0) -> Any:
    """The config the kernel entry of pass_name runs without one on device."""
    return _heuristics()[kernel_pass(pass_name).name](params, device)


def _timed_layer(name: str, params: Conv2dGw8Params) -> Conv2dGw8Params:
    """The layer whose config pass `name` takes for params (TypeError for anything but
    Conv2dGw8Params): params, or for wgrad params without a bias, since the bias gradient's
    sums ride on the weights' walk and the launch compiles them in."""
    if not isinstance(params, Conv2dGw8Params):
        raise TypeError(f"params must be a Conv2dGw8Params, got {type(params).__name__}")
    if name == "wgrad" and params.has_bias:
        return dataclasses.replace(params, has_bias=False)
    return params


def choose_config(
    pass_name: str,
    params: Conv2dGw8Params,
    device: int = 0,
    model: LatencyModel | None = None,
    mode: str | None = None,
) -> ConfigChoice:
    """The config pass_name runs with on the layer params on CUDA device `device`.

    model: a model of your own (LatencyModel.load) to use instead of the shipped ones; it
    must be of pass_name and is trusted to fit this GPU and these kernels (TypeError for
    anything but a LatencyModel: a path is read with LatencyModel.load). Without one, the
    choice is memoised per (pass, params, device, selection mode). mode: the selection mode
    of this choice ("model", "heuristic" or "autotune", in any case, as set_selection_mode
    takes it; where None, selection_mode(), which SPIO_CONFIG_SELECTION is read for only
    then); a model of your own chooses as "model" does. A wgrad layer with a bias gets the
    config of the same layer without it (_timed_layer).
    """
    name = kernel_pass(pass_name).name
    params = _timed_layer(name, params)
    if mode is not None:
        mode = normalized_mode(mode, f"mode must be one of {', '.join(SELECTIONS)} or None")
    _check_model(model)
    if model is None:
        chosen_mode = selection_mode() if mode is None else mode
        if chosen_mode == "heuristic":
            # Not memoised with the others: the reason names where the mode came from, which
            # may change while the config does not (the heuristic memoises its own).
            origin = mode_origin() if mode is None else f"choose_config(mode={mode!r})"
            why = f"the selection mode is heuristic ({origin})"
            choice = ConfigChoice(heuristic_config(name, params, device), "heuristic", why)
        else:
            choice = _choose_shipped(name, params, device, chosen_mode)
        return _placed(choice, name, params, device)
    if model.pass_name != name:
        raise ValueError(f"model is a {model.pass_name} model; pass_name is {name!r}")
    choice = _model_or_heuristic(model, params, device, f"the given model ({model.gpu})")
    return _placed(choice, name, params, device)


def _check_model(model: Any) -> None:
    """Raise TypeError unless model is a LatencyModel or None."""
    if model is not None and not isinstance(model, LatencyModel):
        given = f"{model!r}" if isinstance(model, str | os.PathLike) else type(model).__name__
        raise TypeError(
            "model must be a LatencyModel or None (LatencyModel.load(path) reads a model "
            f"file), got {given}"
        )


def _model_or_heuristic(
    model: LatencyModel, params: Conv2dGw8Params, device: int, why: str
) -> ConfigChoice:
    """The config measured fastest on params where the model was trained on it and the
    heuristic's config was among those timed there; else the model's pick where it predicts
    it MIN_PREDICTED_GAIN faster than the heuristic's config; else the heuristic's.

    wgrad layers with short row chunks in their space (wgrad_spec.has_short_chunks: small
    layers, where the heuristic walks them) take the heuristic's config: the models were
    trained before such tiles existed, and on 26 of 27 such layers their picks ran at
    0.64-0.99x its speed (H200, 2026-11-29, tools/wgrad_short_chunks_check.py: 1x64x16x16
    5 x 5 5.24 us against 3.38, 1x256x16x16 4.09 against 2.61, 8x128x8x8 4.21 against
    3.09), 1.03x at 1x64x56x56."""
    import spio.jit

    if model.pass_name == "wgrad" and wgrad_spec.has_short_chunks(params):
        because = (
            f"{why}: the layer's space holds wgrad tiles of short row chunks, which no "
            "model has timed (the heuristic's tile for such layers walks them)"
        )
        return ConfigChoice(heuristic_config("wgrad", params, device), "heuristic", because)
    # The heuristic's spec-level default stands in for it: the kernel entries' default_config_on
    # compiles and loads the default's kernel to balance its waves, a second compile (about
    # a second) for a config that may not run.
    sm_count = spio.jit.device_info(device).sm_count
    default = kernel_pass(model.pass_name).default_config(params, sm_count)
    if model.launch == "launcher" and model.pass_name == "wgrad":
        from spio.kernels.conv2d_gw8 import wgrad

        # A model of launched tiles is held to the tile the heuristic launches on this GPU
        # (with TMA rows where it has TMA, wgrad_tma_tile.tma_tile), which it knows as launched.
        default = wgrad.default_tile_on(params, device)
    # Campaigns time layers without bias; fprop's bias is an epilogue of C adds per pixel,
    # which does not change which config is fastest.
    timed_layer = dataclasses.replace(params, has_bias=False)
    measured = model.measured_config(timed_layer)
    untimed = ""
    if measured is not None:
        # Campaigns time the heuristic's config as the device runs it (fprop's walk shortened
        # to fill the last wave): that one is compiled only where the spec-level one was not
        # timed, a quarter of the training layers.
        if model.was_timed(timed_layer, default) or model.was_timed(
            timed_layer, heuristic_config(model.pass_name, params, device)
        ):
            choice = ConfigChoice(measured, "measured", f"{why}: measured on this layer")
            return _unless_untimed(choice, model, params, device)
        # A campaign older than the heuristic's config (a prefetch or a tile the space did
        # not hold then) timed the layer without it: its fastest is no evidence against the
        # heuristic, which ran 5% faster than it on 128 x 1024 x 16 x 16 (H100, fprop).
        untimed = "; the layer's campaign never timed the heuristic's config"
    pick, gain = model.best_config_over(params, default)
    if gain < MIN_PREDICTED_GAIN:
        because = (
            f"{why} predicts its pick only {gain:.1%} faster than the heuristic's config "
            f"(it needs {MIN_PREDICTED_GAIN:.0%}){untimed}"
        )
        heuristic = heuristic_config(model.pass_name, params, device)
        return ConfigChoice(heuristic, "heuristic", because)
    choice = ConfigChoice(pick, "model", f"{why}{untimed}")
    return _unless_untimed(choice, model, params, device)


def _unless_untimed(
    choice: ConfigChoice, model: LatencyModel, params: Conv2dGw8Params, device: int
) -> ConfigChoice:
    """choice, or the heuristic's config where that walks or tiles in a way model never timed
    (_give_way.unless_untimed)."""

    def heuristic() -> Any:
        return heuristic_config(model.pass_name, params, device)

    return unless_untimed(
        choice, model.pass_name, model.launch, model.limits, params, device, heuristic
    )


def predicted_gain(model: LatencyModel, params: Conv2dGw8Params, default: Any, pick: Any) -> float:
    """How much faster the model predicts pick than the heuristic's default (0.1: 10%); inf
    where they are the same config (the pick needs no margin then)."""
    if pick == default:
        return float("inf")
    default_us, pick_us = model.predict_us(params, [default, pick])
    return float(default_us / pick_us - 1)


@functools.cache
def _choose_shipped(
    pass_name: str, params: Conv2dGw8Params, device: int, mode: str
) -> ConfigChoice:
    """choose_config's choice without a model of the caller's, in mode "model" or
    "autotune" (memoised: an autotune choice is timed once per layer in a process)."""
    if mode == "autotune":
        return _tuned(pass_name, params, device)
    model, why = _fitting_model(pass_name, device)
    if model is None:
        return ConfigChoice(heuristic_config(pass_name, params, device), "heuristic", why)
    return _model_or_heuristic(model, params, device, why)


def _fitting_model(pass_name: str, device: int) -> tuple[LatencyModel | None, str]:
    """The shipped model of pass_name that fits device's GPU and these kernels (None where
    none does), and why."""
    import spio.jit
    from spio.kernels.conv2d_gw8.sources_digest import sources_digest

    gpu = spio.jit.device_info(device).name
    model = shipped_model(pass_name, gpu)
    kernels = sources_digest(pass_name)
    if model is None:
        return None, f"no {pass_name} model ships for {gpu}"
    if model.kernel != kernels:
        why = (
            f"the shipped {pass_name} model for {gpu} timed kernels {model.kernel or '(unknown)'}"
            f"; these are {kernels}"
        )
        return None, why
    return model, f"the shipped {pass_name} model for {gpu} (kernels {kernels})"


def _proxy_model(pass_name: str, device: int) -> LatencyModel | None:
    """For a GPU no model ships for: the shipped model of pass_name for these kernels whose
    GPU's SM count is nearest the device's (the first by name among equals), or None."""
    import spio.jit
    from spio.kernels.conv2d_gw8.sources_digest import sources_digest

    sm_count = spio.jit.device_info(device).sm_count
    kernels = sources_digest(pass_name)
    fitting = [
        shipped_model(entry.pass_name, entry.gpu)
        for entry in shipped_models()
        if entry.pass_name == pass_name and entry.kernel == kernels
    ]
    models = [model for model in fitting if model is not None]
    if not models:
        return None
    return min(models, key=lambda model: (abs(model.limits.sm_count - sm_count), model.gpu))


def tune_config(
    pass_name: str,
    params: Conv2dGw8Params,
    device: int = 0,
    model: LatencyModel | None = None,
    count: int = AUTOTUNE_CANDIDATES,
) -> ConfigChoice:
    """Time the model's shortlist for params on CUDA device `device` and return the fastest
    (source `autotune`; the reason gives its time and the heuristic's).

    The shortlist (_autotune.candidates): the config measured fastest on this layer where
    the model was trained on it, the model's `count` best-predicted configs, and the
    heuristic's; each of them in each of its walks on the device (_with_walks: for wgrad
    row chunks, segments, segments with deeper prefetch; for fprop and dgrad row chunks
    and, on images of 32 rows or more, one wave of segments), the fastest kept as timed.
    model: one of your own (LatencyModel.load), trusted to fit these kernels; None takes
    the shipped model of this GPU, or where none ships, the shipped model of the GPU with
    the nearest SM count (for these kernels) with a shortlist of PROXY_CANDIDATES (held
    out, the H200's model shortlisting for the H100 and back did as well as their own,
    docs/perfmodel); where no model fits the kernels, the heuristic's config untimed
    (source `heuristic`). Every call times anew (choose_config in `autotune` mode keeps
    the result per layer); the device is synchronized first.
    """
    name = kernel_pass(pass_name).name
    params = _timed_layer(name, params)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    _check_model(model)
    if model is not None:
        if model.pass_name != name:
            raise ValueError(f"model is a {model.pass_name} model; pass_name is {name!r}")
        return _tune(model, params, device, count, f"the given model ({model.gpu})", own=True)
    shortlister, count, why, own = _shortlister(name, device, count)
    if shortlister is None:
        return _nothing_to_time(name, params, device, why)
    return _tune(shortlister, params, device, count, why, own)


def _nothing_to_time(
    pass_name: str, params: Conv2dGw8Params, device: int, why: str
) -> ConfigChoice:
    """The heuristic's config, where no model fits these kernels to shortlist from."""
    config = heuristic_config(pass_name, params, device)
    return ConfigChoice(config, "heuristic", f"{why}: no shortlist to time")


def _shortlister(
    pass_name: str, device: int, count: int
) -> tuple[LatencyModel | None, int, str, bool]:
    """The shipped model that shortlists pass_name's configs on device, the shortlist's
    length, why, and whether the model is this GPU's: this GPU's model with count, else the
    nearest GPU's with at least PROXY_CANDIDATES, else None."""
    model, why = _fitting_model(pass_name, device)
    if model is not None:
        return model, count, why, True
    proxy = _proxy_model(pass_name, device)
    if proxy is None:
        return None, count, why, False
    why = f"{why}; the shipped {pass_name} model for {proxy.gpu}"
    return proxy, max(count, PROXY_CANDIDATES), why, False


def _tuned(pass_name: str, params: Conv2dGw8Params, device: int) -> ConfigChoice:
    """choose_config's `autotune` mode: the tuning kept on disk for this GPU, kernels, layer
    and shortlist (_tunings), else a tuning as tune_config's, kept for the next process."""
    import spio.jit
    from spio.kernels.conv2d_gw8.sources_digest import sources_digest

    shortlister, count, why, own = _shortlister(pass_name, device, AUTOTUNE_CANDIDATES)
    if shortlister is None:
        return _nothing_to_time(pass_name, params, device, why)
    gpu = spio.jit.device_info(device).name
    key = tuning_key(pass_name, gpu, sources_digest(pass_name), params, shortlister.gpu, count)
    kept = load_tuning(key)
    if kept is not None:
        config, path = kept
        return ConfigChoice(config, "autotune", f"kept from an earlier tuning on {gpu} ({path})")
    # The shortlister found above times it (tune_config would look it up again).
    choice = _tune(shortlister, params, device, count, why, own)
    if choice.source == "autotune":
        store_tuning(key, choice.config, choice.reason)
    return choice


def _tune(
    model: LatencyModel,
    params: Conv2dGw8Params,
    device: int,
    count: int,
    why: str,
    own: bool,
) -> ConfigChoice:
    """The fastest of model's shortlist, timed. Where the device has no memory for the
    timing, what choose_config's `model` mode runs (own: the model is this GPU's), else the
    heuristic's config, untimed."""
    heuristic = heuristic_config(model.pass_name, params, device)
    shortlist = _with_walks(
        model.pass_name, params, candidates(model, params, heuristic, count), device
    )
    try:
        times = time_configs(model.pass_name, params, shortlist, device)
    except MemoryError as error:
        if own:
            untimed = _model_or_heuristic(model, params, device, why)
        else:
            untimed = ConfigChoice(heuristic, "heuristic", why)
        return dataclasses.replace(untimed, reason=f"{untimed.reason}; not timed: {error}")
    fastest = min(range(len(shortlist)), key=times.__getitem__)
    heuristic_us = times[shortlist.index(heuristic)]
    reason = (
        f"fastest of {len(shortlist)} configs from {why}, timed on the device: "
        f"{times[fastest]:.2f} us (the heuristic's {heuristic_us:.2f} us)"
    )
    return ConfigChoice(shortlist[fastest], "autotune", reason)


def _with_walks(
    pass_name: str, params: Conv2dGw8Params, configs: list[Any], device: int
) -> list[Any]:
    """configs, each followed by its other walks on device (_walks), without repeats. The
    walks' kernels compile side by side in threads (finding a segmented walk's occupancy
    compiles it), as the timing's own compiles do."""
    walks_of = _walks()[pass_name]
    workers = max(1, min(len(configs), os.cpu_count() or 1, COMPILE_THREADS))
    with ThreadPoolExecutor(workers) as pool:
        walks = list(pool.map(lambda config: walks_of(params, config, device), configs))
    return list(dict.fromkeys(walk for config_walks in walks for walk in config_walks))
