"""The GPU tier's kernels compile, in every configuration its tests launch, without a GPU.

tests/gpu/ runs only where there is a GPU; compiling its kernels here (for sm_90) means a GPU
run fails only for what a GPU can tell: wrong values, faults.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path

import _nvrtc
import pytest

KERNELS = Path(__file__).resolve().parents[1] / "gpu" / "kernels"
SHAPES = ("M16N8K8", "M16N8K16")
ELEMENTS = ("__half", "__nv_bfloat16")

Config = tuple[str, str, Mapping[str, object]]

# (kernel file, entry, defines) for every launch of tests/gpu.
CONFIGS: list[Config] = [
    *(
        ("ldmatrix.cu", "ldmatrix_round_trip", {"NUM": num, "TRANS": trans})
        for num, trans in itertools.product((1, 2, 4), (0, 1))
    ),
    *(("async_copy.cu", "async_copy_zero_fill", {"WAIT_ALL": w}) for w in (0, 1)),
    ("async_copy.cu", "async_copy_pipeline", {"WAIT_ALL": 0}),
    *(
        ("fragment_mma.cu", "fragment_mma", {"SHAPE": shape, "ELEMENT": element})
        for shape, element in itertools.product(SHAPES, ELEMENTS)
    ),
    *(
        ("fragment_load.cu", "fragment_load", {"SHAPE": shape, "OPERAND_A": a, "TRANS": t})
        for shape, a, t in itertools.product(SHAPES, (0, 1), (0, 1))
    ),
    # Pairs of the two-register fragments (B of m16n8k16, A of m16n8k8) through one .x4.
    *(
        (
            "fragment_load.cu",
            "fragment_load",
            {"SHAPE": shape, "OPERAND_A": a, "TRANS": t, "PAIR": 1},
        )
        for (shape, a), t in itertools.product((("M16N8K16", 0), ("M16N8K8", 1)), (0, 1))
    ),
    *(
        (
            "mma_tile.cu",
            "mma_tile",
            {"SHAPE": shape, "ELEMENT": element, "A_TRANS": a, "B_TRANS": b},
        )
        for shape, element, a, b in itertools.product(SHAPES, ELEMENTS, (0, 1), (0, 1))
    ),
    ("checkerboard_load.cu", "checkerboard_load", {}),
]


def _id(config: Config) -> str:
    file, _, defines = config
    return "-".join([Path(file).stem, *(str(value) for value in defines.values())])


@pytest.mark.parametrize("config", CONFIGS, ids=[_id(config) for config in CONFIGS])
def test_gpu_kernel_compiles(config: Config) -> None:
    """The kernel compiles for sm_90 (the GPU tier's H100 / H200), with no local memory."""
    file, entry, defines = config
    options = [f"-D{name}={value}" for name, value in defines.items()]
    compiled = _nvrtc.compile_cuda((KERNELS / file).read_text(), arch="sm_90", options=options)
    instructions = _nvrtc.ptx_instructions(compiled.ptx, entry)
    assert not [line for line in instructions if line.startswith(("ld.local", "st.local"))]


def test_gpu_kernel_compiles_through_spio_jit() -> None:
    """tests/gpu/_launch.py's spio.jit path: include_dirs and defines as it passes them."""
    jit = pytest.importorskip("spio.jit")
    code = jit.compile(
        (KERNELS / "mma_tile.cu").read_text(),
        include_dirs=[_nvrtc.SPIO_INCLUDE_DIR],
        defines={"SHAPE": "M16N8K16", "ELEMENT": "__half", "A_TRANS": 1, "B_TRANS": 0},
        arch="sm_90",
        name="test.cu",
        cache=False,
    )
    assert code.cubin
