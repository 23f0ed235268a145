"""saxpy_demo: a small project that uses spio-jit on its own (no Spio package besides it).

y += a * x for CUDA torch tensors of float32 or float16, with the kernel compiled at run
time for the GPU it runs on. The block size reaches the kernel through a header generated
in memory, as a project's own code generator would write it.

    python saxpy_demo.py            # on a GPU: runs and checks against torch
    python saxpy_demo.py --arch sm_90   # anywhere: compiles only, prints what NVRTC made
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

import spio.jit as jit

SOURCE = r"""
#include <cuda_fp16.h>

#include "saxpy_demo/config.h"  // kBlock, generated in memory

template <typename T>
__global__ void saxpy(T a, const T* x, T* y, int n) {
    const int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
"""
KERNELS = {"float32": "saxpy<float>", "float16": "saxpy<__half>"}
SCALARS = {"float32": jit.float32, "float16": jit.float16}
BLOCK = 256


def config_header(block: int) -> str:
    """Return the generated header that fixes the block size at compile time."""
    return f"#pragma once\nconstexpr int kBlock = {block};\n"


def build(arch: str | None = None, block: int = BLOCK) -> jit.CompiledCode:
    """Compile both instantiations; arch=None targets the current GPU."""
    return jit.compile(
        SOURCE,
        headers={"saxpy_demo/config.h": config_header(block)},
        arch=arch,
        name_expressions=list(KERNELS.values()),
        options=jit.CompileOptions(lineinfo=True),
        name="saxpy_demo.cu",
    )


@functools.cache
def _module(device: int) -> jit.Module:
    arch = jit.device_info(device).arch
    return build(arch).load(device=device)


def saxpy(a: float, x: Any, y: Any) -> None:
    """y += a * x in place, on y's device and torch's current stream."""
    dtype = str(x.dtype).removeprefix("torch.")
    if dtype not in KERNELS or y.dtype != x.dtype or y.shape != x.shape:
        raise TypeError("x and y must be CUDA tensors of one shape, float32 or float16")
    kernel = _module(x.device.index).get_kernel(KERNELS[dtype])
    n = x.numel()
    grid = (n + BLOCK - 1) // BLOCK
    jit.launch(kernel, grid, BLOCK, (SCALARS[dtype](a), x, y, jit.int32(n)))


def main() -> None:
    parser = argparse.ArgumentParser(description="saxpy with spio-jit")
    parser.add_argument("--arch", help="compile only, for this architecture (e.g. sm_90)")
    args = parser.parse_args()
    if args.arch:
        code = build(args.arch)
        print(f"{code.arch}: {len(code.cubin)} bytes of cubin, from cache: {code.from_cache}")
        for expression, mangled in code.lowered_names.items():
            print(f"  {expression} -> {mangled}")
        return
    import torch

    x = torch.randn(1_000_000, device="cuda")
    y = torch.randn(1_000_000, device="cuda")
    expected = 2.0 * x + y
    saxpy(2.0, x, y)
    torch.testing.assert_close(y, expected)
    print("saxpy matches torch on", torch.cuda.get_device_name())


if __name__ == "__main__":
    main()
