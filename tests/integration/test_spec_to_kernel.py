"""Cross-package flow: a spec in spio.dims becomes a cubin through spio.jit.

spio-jit knows nothing of spio-dims (callers hand it headers): this checks the hand-off
works for host-only and device (.cuh) headers and for every architecture the kernels target.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import spio.dims as dims
import spio.jit as jit

KERNEL = """
#include "types.h"  // generated from the spec below

extern "C" __global__ void scale(float* out, const float* in, float factor) {
    ThreadIndex thread;
    BlockIndex block;
    *Out(out)[block][thread] = factor * *In(in)[block][thread];
}
"""


def _specs() -> list[dims.Spec]:
    return [
        dims.CompoundIndex("BlockIndex", dims.Dims(n64=16), init="blockIdx.x"),
        dims.CompoundIndex("ThreadIndex", dims.Dims(n=64), init="threadIdx.x"),
        dims.Tensor("In", dims.dtype.float, dims.Dims(n=1024), constant=True),
        dims.Tensor("Out", dims.dtype.float, dims.Dims(n=1024)),
    ]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_generated_header_compiles_to_a_cubin(arch: str) -> None:
    code = jit.compile(
        KERNEL,
        headers={"types.h": dims.generate(_specs())},
        include_dirs=[dims.include_dir()],
        arch=arch,
    )
    assert code.arch == arch
    assert code.cubin is not None
    assert code.cubin[:4] == b"\x7fELF"


def test_a_changed_spec_is_a_new_cache_entry() -> None:
    first = jit.compile(
        KERNEL,
        headers={"types.h": dims.generate(_specs())},
        include_dirs=[dims.include_dir()],
        arch="sm_90",
    )
    bigger = [
        *_specs()[:2],
        *(
            dims.Tensor(t.name, dims.dtype.float, dims.Dims(n=2048), constant=t.constant)
            for t in _specs()[2:]
            if isinstance(t, dims.Tensor)
        ),
    ]
    second = jit.compile(
        KERNEL,
        headers={"types.h": dims.generate(bigger)},
        include_dirs=[dims.include_dir()],
        arch="sm_90",
    )
    again = jit.compile(
        KERNEL,
        headers={"types.h": dims.generate(_specs())},
        include_dirs=[dims.include_dir()],
        arch="sm_90",
    )
    assert first.key != second.key
    assert again.from_cache
    assert again.cubin == first.cubin


def test_device_headers_compile_through_spio_jit() -> None:
    specs = [
        dims.Fragment("AFrag", "m16n8k16.a", dims.dtype.half, "i", "k"),
        dims.Fragment("BFrag", "m16n8k16.b", dims.dtype.half, "k", "j"),
        dims.Fragment("CFrag", "m16n8k16.c", dims.dtype.float, "i", "j"),
    ]
    source = """
#include "types.h"  // fragments
extern "C" __global__ void one_mma(float* out) {
    AFrag a; BFrag b; CFrag c;
    a.fill(__float2half(1.0f)); b.fill(__float2half(1.0f)); c.zero();
    spio::mma::mma(a, b, c, c);
    out[threadIdx.x] = c.get(0);
}
"""
    code = jit.compile(
        source,
        headers={"types.h": dims.generate(specs)},
        include_dirs=[dims.include_dir()],
        arch="sm_90",
        target="ptx",
    )
    assert code.ptx is not None
    assert "mma.sync.aligned.m16n8k16" in code.ptx
