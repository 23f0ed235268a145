"""Hash what a sample of every conv2d_gw8 pass's configs compiles to and launches with, so
that two versions of the sources can be compared before relabelling their timings.

    git worktree add /tmp/old OLD_REV
    PYTHONPATH=$(ls -d /tmp/old/packages/*/src | tr '\\n' :) \\
        uv run python tools/conv_cubins_check.py > old.json
    uv run python tools/conv_cubins_check.py > new.json
    python tools/conv_cubins_check.py --compare old.json new.json

Each run compiles (NVRTC, sm_90, no cache: no GPU needed) 13 configs of each pass on three
layers (an L2-resident one, an odd-sized bf16 one with a bias, asymmetric padding and a 5 x 3
filter, and a 14 x 14 one): the pass's default and 12 spread over its space. It prints, per
pass, each config's cubin SHA-256 and launch geometry, with the sources digests. --compare
prints how many are identical; where all are, the change leaves the kernels as they were
and `tools/relabel_timings.py` may move the timings and models to the new digests
(CONTRIBUTING, "Changing a kernel").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

#: Conv2dGw8Params.make keyword arguments of the sampled layers.
LAYERS: tuple[dict[str, Any], ...] = (
    {"n": 32, "c": 64, "h": 64, "w": 64},
    {
        "n": 8, "c": 128, "h": 17, "w": 13, "r": 5, "s": 3, "padding": (2, 1),
        "dtype": "bfloat16", "has_bias": True,
    },
    {"n": 64, "c": 256, "h": 14, "w": 14},
)  # fmt: skip
SAMPLE = 12
PASSES = ("fprop", "dgrad", "wgrad")


def _sample(space: list[Any]) -> list[Any]:
    step = max(1, len(space) // SAMPLE)
    return space[::step][:SAMPLE]


def hashes() -> dict[str, Any]:
    """{"digests": {pass: digest}, pass: {"layer|config": [cubin sha, geometry]}}."""
    import spio.jit
    from spio.kernels.conv2d_gw8 import (
        Conv2dGw8Params,
        dgrad,
        dgrad_spec,
        fprop,
        fprop_spec,
        wgrad,
        wgrad_heuristic,
        wgrad_spec,
    )
    from spio.kernels.conv2d_gw8.sources_digest import sources_digest

    layers = [Conv2dGw8Params.make(**fields) for fields in LAYERS]
    out: dict[str, Any] = {"digests": {name: sources_digest(name) for name in PASSES}}
    for name, launcher, spec, default_config in (
        ("fprop", fprop, fprop_spec, fprop_spec.default_config),
        ("dgrad", dgrad, dgrad_spec, dgrad_spec.default_config),
        ("wgrad", wgrad, wgrad_spec, wgrad_heuristic.default_config),
    ):
        rows = {}
        for params in layers:
            for config in [*_sample(spec.config_space(params)), default_config(params)]:
                request = launcher.compile_request(params, config, "sm_90")
                code = spio.jit.compile(
                    request.source,
                    headers=request.headers,
                    include_dirs=request.include_dirs,
                    arch="sm_90",
                    name=request.name,
                    cache=False,
                )
                geometry = spec.launch_geometry(params, config)
                rows[f"{params}|{config}"] = [hashlib.sha256(code.cubin).hexdigest(), str(geometry)]
        out[name] = rows
    return out


def compare(old_path: str, new_path: str) -> int:
    """Print per pass how many sampled configs compile and launch identically; 0 when all."""
    old, new = (json.loads(Path(path).read_text()) for path in (old_path, new_path))
    differing = 0
    for name in PASSES:
        same = sum(old[name][key] == new[name].get(key) for key in old[name])
        differing += len(old[name]) - same
        print(
            f"{name}: {same} of {len(old[name])} identical "
            f"({old['digests'][name]} -> {new['digests'][name]})"
        )
    return 0 if differing == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    json.dump(hashes(), sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
