"""spio.torch: PyTorch modules of Spio's kernels, model conversion and the `spio` command.

`Conv2dGw8` (an nn.Conv2d with 8 channels per group, stride 1, run by Spio), `convert`
(swap a model's eligible nn.Conv2d layers for it; it returns a `Conversion`: the names
swapped, and the convs skipped with the reasons), `Linear` (an nn.Linear on Spio's
tensor-core matmul) and `precompile` (compile a model's kernels side by side before its
first step) import torch when first used, so that
`import spio.torch` stays cheap for the command line; the functional operators live in
`spio.functional`. `set_wgrad_deterministic(False)` trades the weight gradients' run-to-run
bitwise reproducibility for speed.
"""

from __future__ import annotations

from importlib.metadata import version as _version
from typing import Any

from ._determinism import set_wgrad_deterministic, wgrad_is_deterministic

__version__ = _version("spio-torch")

#: The lazily imported names, by the module that holds them.
_MODULES = {
    "Conv2dGw8": "_modules",
    "Conversion": "_modules",
    "convert": "_modules",
    "ineligible_because": "_modules",
    "Linear": "_linear_module",
    "precompile": "_precompile",
    "Precompiled": "_precompile",
    "PrecompiledPass": "_precompile",
}

__all__ = [
    "Conv2dGw8",
    "Conversion",
    "Linear",
    "Precompiled",
    "PrecompiledPass",
    "__version__",
    "convert",
    "ineligible_because",
    "precompile",
    "set_wgrad_deterministic",
    "wgrad_is_deterministic",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        import importlib

        return getattr(importlib.import_module(f"spio.torch.{_MODULES[name]}"), name)
    raise AttributeError(f"module 'spio.torch' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The lazy names too, for tab completion; not the module's own imports.
    return sorted(__all__)
