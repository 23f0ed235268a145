"""Time the launcher's wgrad default against the tiles an earlier checkout's heuristic chose,
per layer: a change of heuristic rules measured as a whole, held out on layers no run of the
change timed.

    # in a worktree of the earlier revision (no GPU needed):
    python tools/wgrad_former_default_check.py save --layers 4x512x32x32x7 ... --out tiles.json
    # in this checkout, on the GPU:
    python tools/wgrad_former_default_check.py time --tiles tiles.json

`save` writes, for each layer of --layers (N x C x H x W x K: K x K filters, padding K // 2),
the heuristic's tile before its walk is placed, as wgrad.default_tile_on chooses it on a GPU
of --sm-count SMs (132 by default, an H100 or H200) and of --arch (sm_90: the TMA tile
rules apply): wgrad_heuristic.default_config, then tma_tile where the arch has TMA, then
split_walk_tile. It compiles nothing and reads the checkout it runs in, so that run in a
worktree of the earlier revision writes that revision's choices.

`time` places each saved tile as the launcher places a tile (wgrad.balanced_config_on) and
times it against what a launch without a config runs now (wgrad.default_config_on), in
this process, alternating three rounds (CUDA-graph replays, the fastest round's median)
with cuDNN; both are checked against the fp32 reference (grad_w pre-filled with NaN). It
ends with the geometric mean and range of the former's time over the new one's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wgrad_timing import max_error, named_layers, print_geomean, start, time_alternating

from spio.kernels.conv2d_gw8 import WgradConfig, wgrad_heuristic
from spio.kernels.conv2d_gw8._tensor_maps import has_tma


def save(layers: list[str], sm_count: int, arch: str, out: Path) -> None:
    """Write each layer's heuristic tile on sm_count SMs of arch to out (JSON: the layer's
    text -> the tile's fields)."""
    tiles = {}
    for text, params in zip(layers, named_layers(layers, []), strict=True):
        tile = wgrad_heuristic.default_config(params, sm_count)
        if has_tma(arch):
            tile = wgrad_heuristic.tma_tile(params, tile, sm_count)
        tile = wgrad_heuristic.split_walk_tile(params, tile, sm_count)
        tiles[text] = tile.__dict__
    out.write_text(json.dumps(tiles, indent=1) + "\n")
    print(f"wrote {len(tiles)} tiles to {out}")


def time_against(tiles_path: Path) -> None:
    """Time each saved tile, placed, against the launcher's default now (GPU)."""
    from spio.kernels.conv2d_gw8 import wgrad

    saved = json.loads(tiles_path.read_text())
    start()
    ratios = []
    for text, fields in saved.items():
        (params,) = named_layers([text], [])
        now = wgrad.default_config_on(params)
        former = wgrad.balanced_config_on(params, WgradConfig(**fields))
        times, cudnn_us = time_alternating(params, [now, former])
        ratio = times[former] / times[now]
        ratios.append(ratio)
        print(
            f"{text}: former {times[former]:.2f} us -> now {times[now]:.2f} us ({ratio:.3f}x; "
            f"cuDNN {cudnn_us:.2f} us, {cudnn_us / times[now]:.2f}x) max error now "
            f"{max_error(params, now):.1e}, former {max_error(params, former):.1e}",
            flush=True,
        )
    print_geomean(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    saving = commands.add_parser("save", help="write the heuristic's tiles (no GPU)")
    saving.add_argument("--layers", nargs="+", required=True, metavar="NxCxHxWxK")
    saving.add_argument("--sm-count", type=int, default=132)
    saving.add_argument("--arch", default="sm_90")
    saving.add_argument("--out", type=Path, required=True)
    timing = commands.add_parser("time", help="time them against the default now (GPU)")
    timing.add_argument("--tiles", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "save":
        save(args.layers, args.sm_count, args.arch, args.out)
    else:
        time_against(args.tiles)


if __name__ == "__main__":
    main()
