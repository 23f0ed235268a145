"""`spio demo`: the whole path from spec to launched kernel, on whatever this machine has.

Generates a types header for a typed-dimension kernel with spio.dims, compiles it with
spio.jit (NVRTC from pip wheels) for the GPU's exact architecture, and, when a GPU is
present, launches it on PyTorch tensors and checks the result against PyTorch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from typing import TextIO

import spio.dims as dims
import spio.jit as jit

TILE = 32
NO_GPU_ARCH = "sm_90"


@dataclass(frozen=True)
class DemoResult:
    """What the demonstration did.

    Attributes:
        arch: the architecture compiled for.
        compile_ms: the first compile (an NVRTC run unless the disk cache already held it).
        cached_compile_ms: the same compile again, served by the cache.
        registers: registers per thread of the compiled kernel, when a GPU loaded it.
        checked: whether the kernel ran on a GPU and matched PyTorch.
    """

    arch: str
    compile_ms: float
    cached_compile_ms: float
    registers: int | None
    checked: bool


def transpose_specs(size: int) -> list[dims.Spec]:
    """Return the typed-dimension specs of the demo transpose of a size x size matrix."""
    if size <= 0 or size % TILE:
        raise ValueError(f"size must be a positive multiple of {TILE}, got {size}")
    tiles = size // TILE
    return [
        dims.CompoundIndex("BlockIndex", dims.Dims(i32=tiles, j32=tiles), init="blockIdx.x"),
        dims.CompoundIndex("ThreadIndex", dims.Dims(i=TILE, j=TILE), init="threadIdx.x"),
        dims.Tensor("A", dims.dtype.float, dims.Dims(i=size, j=size), constant=True),
        dims.Tensor("B", dims.dtype.float, dims.Dims(j=size, i=size)),
    ]


def _compile(source: str, types_h: str, arch: str) -> jit.CompiledCode:
    return jit.compile(
        source,
        headers={"types.h": types_h},
        include_dirs=[dims.include_dir()],
        arch=arch,
        name="spio_demo_transpose.cu",
    )


def _timed_ms(source: str, types_h: str, arch: str) -> tuple[jit.CompiledCode, float]:
    start = time.perf_counter()
    code = _compile(source, types_h, arch)
    return code, (time.perf_counter() - start) * 1e3


def run_demo(out: TextIO, *, size: int = 1024) -> DemoResult:
    """Generate, compile and (with a GPU) launch and check the demo transpose."""
    have_gpu = jit.device_count() > 0
    arch = jit.device_info(0).arch if have_gpu else NO_GPU_ARCH
    source = resources.files("spio.torch").joinpath("_demo_transpose.cu").read_text()
    types_h = dims.generate(transpose_specs(size))
    out.write(f"Typed transpose of a {size} x {size} float matrix:\n")
    out.write(f"  spec -> types.h     {len(types_h)} bytes\n")
    code, compile_ms = _timed_ms(source, types_h, arch)
    origin = "from the disk cache" if code.from_cache else "NVRTC"
    out.write(f"  NVRTC -> cubin      {arch}, {len(code.cubin or b'')} bytes, ")
    out.write(f"{compile_ms:.1f} ms ({origin})\n")
    _, cached_ms = _timed_ms(source, types_h, arch)
    out.write(f"  compile again       {cached_ms:.2f} ms (disk cache)\n")
    if not have_gpu:
        out.write(f"  launch              skipped: no GPU here (compiled for {arch} anyway)\n")
        return DemoResult(arch, compile_ms, cached_ms, None, checked=False)
    registers, checked = _launch_and_check(code, size, out)
    return DemoResult(arch, compile_ms, cached_ms, registers, checked)


def _launch_and_check(code: jit.CompiledCode, size: int, out: TextIO) -> tuple[int, bool]:
    import torch

    kernel = code.load(device=0).get_kernel("transpose")
    a = torch.randn(size, size, device="cuda:0")
    b = torch.full_like(a, float("nan"))  # poison: an unwritten element fails the check
    tiles = size // TILE
    jit.launch(kernel, grid=tiles * tiles, block=TILE * TILE, args=(b, a))
    torch.cuda.synchronize()
    checked = bool(torch.equal(b, a.t()))
    registers = kernel.attributes.registers
    verdict = "matches torch's a.t()" if checked else "DOES NOT MATCH torch's a.t()"
    out.write(f"  launch on cuda:0    {registers} registers/thread; result {verdict}\n")
    return registers, checked
