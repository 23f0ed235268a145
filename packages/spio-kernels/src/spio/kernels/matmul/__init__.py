"""Matrix multiply C = A @ B on tensor cores (fp16 and bf16, float32 accumulation).

`MatmulParams` holds a multiply's shape, element type and B's memory order (K x N, or N x K
as a linear layer's weight). Two kernels run it: the mma.sync one on every GPU from sm_80,
tiled by a `MatmulConfig` (spec's module doc), and on sm_90 the wgmma one, with TMA and a
`WgmmaConfig` (wgmma_spec). `matmul` launches on device arrays; `matmul_launch` returns a
shape's loaded kernel as a callable that launches with no look-up. torch is imported only by
the reference and the benchmark.
"""

from .launch import (
    MatmulLaunch,
    compile_request,
    default_config_for,
    default_config_on,
    matmul,
    matmul_launch,
)
from .params import MatmulParams
from .spec import MatmulConfig, config_space, default_config, generate_types, launch_geometry
from .wgmma_spec import WgmmaConfig

__all__ = [
    "MatmulConfig",
    "MatmulLaunch",
    "MatmulParams",
    "WgmmaConfig",
    "compile_request",
    "config_space",
    "default_config",
    "default_config_for",
    "default_config_on",
    "generate_types",
    "launch_geometry",
    "matmul",
    "matmul_launch",
]
