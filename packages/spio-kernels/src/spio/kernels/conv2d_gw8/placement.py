"""What a launch runs for the config it was given, per pass.

A config space and a latency model know tiles; the launcher places a tile on the device
before running it. Choosing a config (spio-perfmodel's choose_config) and timing tiles as
launched (the benchmark's --as-launched) both need that placement, so it is defined here
once.
"""

from __future__ import annotations

from typing import Any

from .dgrad_spec import to_fprop_params
from .even_chunks import even_chunks
from .params import Conv2dGw8Params

PASSES = ("fprop", "dgrad", "wgrad")


def placed_config_on(pass_name: str, params: Conv2dGw8Params, config: Any, device: int = 0) -> Any:
    """The config a launch of pass_name that was given config runs on device.

    Every pass cuts the image's rows into even chunks (even_chunks). wgrad also balances
    the tile's walk and adds the kernel's improvements for the GPU (wgrad.balanced_config_on,
    which compiles what it compares). ValueError names the passes for any other pass_name.
    """
    if pass_name == "wgrad":
        from .wgrad import balanced_config_on

        return balanced_config_on(params, config, device)
    if pass_name == "fprop":
        return even_chunks(params, config)
    if pass_name == "dgrad":
        return even_chunks(to_fprop_params(params), config)
    raise ValueError(f"pass_name must be one of {PASSES}, got {pass_name!r}")
