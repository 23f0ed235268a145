"""Time what choose_config runs for fprop and dgrad with and without the rule that gives a
model's pick up where its compiled kernel needs more waves than the model counted
(spio-perfmodel's _give_way._unless_more_waves), against the heuristic's config (GPU).

    python tools/model_waves_check.py --layers 96x128x32x32x3 24x64x48x48x7

For each layer (N x C x H x W x K: K x K filters, padding K // 2) and pass, with this GPU's
shipped model: choose_config's config without the rule and with it, both placed as the
launcher places them, and the launcher's default. It prints the model's pick's waves as its
features count them and as its compiled kernel runs them. Where the rule changes the choice,
the configs are timed in this process, alternating three rounds (CUDA-graph replays), with
cuDNN and the copy bandwidth, and the rule's config is checked against the fp32 reference.
"""

from __future__ import annotations

import argparse
from unittest import mock

import fprop_segments_check
from wgrad_timing import copy_and_cudnn, layer_name, named_layers, print_geomean, start
from wgrad_timing import time_alternating as time_configs

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params
from spio.perfmodel import _give_way, shipped_model
from spio.perfmodel._features import config_feature
from spio.perfmodel._model import LatencyModel
from spio.perfmodel._select import _model_or_heuristic, _placed, heuristic_config


def model_waves(model: LatencyModel, params: Conv2dGw8Params, config: object) -> str:
    """The waves of config's grid as model's features count them and as its compiled
    kernel, placed, runs them."""
    counted = config_feature(model.pass_name, params, config, "waves", model.limits)
    blocks, slots = _give_way.compiled_grid(model.pass_name, params, config, 0)
    return f"{counted:.2f} waves counted, {blocks / slots:.2f} compiled ({blocks} blocks)"


def choices(pass_: str, params: Conv2dGw8Params) -> tuple[object, object, object, str]:
    """choose_config's config for params without the rule and with it (placed), the
    heuristic's, and a line on the model's pick."""
    model = shipped_model(pass_, spio.jit.device_info(0).name)
    if model is None:
        raise SystemExit(f"no {pass_} model ships for {spio.jit.device_info(0).name}")
    with mock.patch.object(_give_way, "_unless_more_waves", lambda choice, *_: choice):
        before = _placed(_model_or_heuristic(model, params, 0, "model"), pass_, params, 0)
    after = _placed(_model_or_heuristic(model, params, 0, "model"), pass_, params, 0)
    note = f"{before.source}: {before.reason}"
    if before.source == "model":
        pick = model.best_config(params)
        note = f"pick {pick}: {model_waves(model, params, pick)}"
    return before.config, after.config, heuristic_config(pass_, params), note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", required=True, metavar="NxCxHxWxK")
    passes = ["fprop", "dgrad"]
    parser.add_argument("--passes", nargs="+", default=passes, choices=passes)
    args = parser.parse_args()
    copy = start()
    gains: list[float] = []
    for params in named_layers(args.layers, []):
        for pass_ in args.passes:
            before, after, heuristic, note = choices(pass_, params)
            print(f"{layer_name(params)} {pass_}: {note}", flush=True)
            if before == after:
                print("  the rule keeps the choice", flush=True)
                continue
            times, cudnn_us = time_configs(params, [before, after, heuristic], pass_)
            for label, config in (("without", before), ("with", after), ("heuristic", heuristic)):
                us = times[config]
                shares = copy_and_cudnn(params, pass_, us, copy, cudnn_us)
                print(f"  {label}: {us:.2f} us, {shares}; {config}", flush=True)
            gains.append(times[before] / times[after])
            error = fprop_segments_check.max_error(pass_, params, after)
            print(f"  with over without {gains[-1]:.3f}x; its error {error:.1e}", flush=True)
    print("the rule's choice over the choice without it:", end=" ")
    print_geomean(gains)


if __name__ == "__main__":
    main()
