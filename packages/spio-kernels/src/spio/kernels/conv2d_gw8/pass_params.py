"""The layer fprop's kernel runs for a pass: dgrad is fprop's kernel on the layer turned
around (dgrad_spec.to_fprop_params), fprop runs the layer as it is.

Kept out of the sources digest (sources_digest.PASS_FILES): it names what the specs already
do, and changes no config's code.
"""

from __future__ import annotations

from .params import Conv2dGw8Params

#: The passes fprop's kernel runs.
FPROP_KERNEL_PASSES = ("fprop", "dgrad")


def fprop_kernel_params(pass_name: str, params: Conv2dGw8Params) -> Conv2dGw8Params:
    """params as fprop's kernel sees them for pass_name: dgrad's forward convolution of
    grad_y (dgrad_spec.to_fprop_params), fprop's the layer itself. ValueError for any other
    pass (wgrad has a kernel of its own)."""
    from .dgrad_spec import to_fprop_params

    if pass_name not in FPROP_KERNEL_PASSES:
        raise ValueError(
            f"pass_name must be one of {list(FPROP_KERNEL_PASSES)} (the passes fprop's kernel "
            f"runs), got {pass_name!r}"
        )
    return to_fprop_params(params) if pass_name == "dgrad" else params
