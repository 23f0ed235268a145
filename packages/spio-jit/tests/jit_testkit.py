"""Kernel sources shared by spio-jit's tests."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

# The architectures the CPU tier compiles for.
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90")

# A generated-types stand-in, passed in memory; it includes a second in-memory header.
TILE_HEADERS = {
    "demo/tile.h": (
        '#pragma once\n#include "demo/shape.h"\nstruct Tile { static constexpr int k = K; };\n'
    ),
    "demo/shape.h": (
        "#pragma once\nconstexpr int M = 16;\nconstexpr int N = 8;\nconstexpr int K = 16;\n"
    ),
}

# fp16/bf16 types, inline-PTX mma.sync / ldmatrix / cp.async, cuda_pipeline.h, and a
# template instantiated through name expressions.
TENSOR_CORE_SOURCE = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

#include "demo/tile.h"

namespace demo {

__device__ inline void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4],
                                    const unsigned (&b)[2], const float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ inline void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
    unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ inline void ldmatrix_x2_trans(unsigned (&r)[2], const void* smem) {
    unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(address));
}

__device__ inline void cp_async_16(void* smem, const void* global) {
    unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global));
}

template <typename T>
__device__ T from_float(float x);
template <>
__device__ float from_float<float>(float x) { return x; }
template <>
__device__ __half from_float<__half>(float x) { return __float2half(x); }
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

}  // namespace demo

template <typename T, int WARPS>
__global__ void tile_mma(const __half* a, const __half* b, T* out) {
    __shared__ alignas(16) __half sa[M * K];
    __shared__ alignas(16) __half sb[K * N];
    const int lane = threadIdx.x % 32;
    demo::cp_async_16(sa + lane * 8, a + lane * 8);
    if (lane < 16) {
        __pipeline_memcpy_async(sb + lane * 8, b + lane * 8, 16);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    unsigned ra[4];
    unsigned rb[2];
    demo::ldmatrix_x4(ra, sa + (lane % 16) * K + (lane / 16) * 8);
    demo::ldmatrix_x2_trans(rb, sb + (lane % 16) * N);
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float d[4];
    demo::mma_m16n8k16(d, ra, rb, c);
    for (int i = 0; i < 4; ++i) {
        out[(blockIdx.x * WARPS + threadIdx.x / 32) * 128 + lane * 4 + i] =
            demo::from_float<T>(d[i] + static_cast<float>(Tile::k));
    }
}
"""

TENSOR_CORE_EXPRESSIONS = (
    "tile_mma<float, 1>",
    "tile_mma<__half, 2>",
    "tile_mma<__nv_bfloat16, 4>",
)

SAXPY_SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
"""

_EM_CUDA = 190


def cubin_sm(cubin: bytes) -> int:
    """Return the SM number a cubin was built for, read from its ELF header."""
    assert cubin[:4] == b"\x7fELF", "not an ELF file"
    machine = int.from_bytes(cubin[18:20], "little")
    assert machine == _EM_CUDA, f"ELF machine {machine} is not EM_CUDA"
    flags = int.from_bytes(cubin[48:52], "little")
    abi_version = cubin[8]
    # CUDA's ELF ABI 8 (CUDA 12.x+) keeps the SM in bits 8..15; earlier ABIs in bits 0..7.
    return (flags >> 8) & 0xFF if abi_version >= 8 else flags & 0xFF


def compile_in_child(cache_dir: str, barrier: Any, results: Any) -> None:
    """Child process of the cache race test: compile one kernel after the barrier."""
    os.environ["SPIO_JIT_CACHE_DIR"] = cache_dir
    import spio.jit as jit

    jit.nvrtc_info()  # load NVRTC before the race starts
    barrier.wait()
    code = jit.compile(TENSOR_CORE_SOURCE, headers=TILE_HEADERS, arch="sm_90")
    results.put((code.from_cache, code.code))


def _kill_this_process() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class WorkerKiller(str):
    """A source that SIGKILLs the process that unpickles it: in compile_many, the worker
    given its variant, as NVRTC crashing on the variant or the OOM killer would."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_kill_this_process, ())


def _sleeper_source(marker: str) -> str:
    """SAXPY_SOURCE, after, the first time (marker missing), ignoring SIGTERM, creating
    marker and sleeping a minute."""
    if not os.path.exists(marker):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        Path(marker).touch()
        time.sleep(60)
    return SAXPY_SOURCE


def _kill_after(marker: str) -> None:
    """SIGKILL this process once marker exists (within 60 s)."""
    deadline = time.monotonic() + 60
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    _kill_this_process()


class _MarkedSource(str):
    """SAXPY_SOURCE carrying the path of a marker file; the process that unpickles it runs
    its class's `unpickled(marker)` instead (what a compile_many worker does first)."""

    unpickled: Callable[[str], Any]
    marker: str

    def __new__(cls, marker: str) -> Self:
        source = super().__new__(cls, SAXPY_SOURCE)
        source.marker = marker
        return source

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).unpickled, (self.marker,))


class SigtermSleeper(_MarkedSource):
    """A source that, unpickled in a worker for the first time (where the file `marker`
    names is missing), makes the worker ignore SIGTERM and sleep a minute: a worker that
    SIGTERM does not end, as one whose SIGTERM handler hangs (NVRTC 12's, in exit())."""

    unpickled = staticmethod(_sleeper_source)


class KillerAfter(_MarkedSource):
    """A source that SIGKILLs the process that unpickles it once the file `marker` names
    exists (within 60 s): a worker that dies while a SigtermSleeper of the same marker
    sleeps."""

    unpickled = staticmethod(_kill_after)


#: The Event of a pool worker's task below (set_ready_event, its pool's initializer).
_ready_event: Any = None


def set_ready_event(ready: Any) -> None:
    """A pool's initializer: the Event ignore_sigterm_in_a_task sets."""
    global _ready_event
    _ready_event = ready


def ignore_sigterm_in_a_task() -> None:
    """A pool worker's task that makes its worker ignore SIGTERM, sets the Event its pool's
    initializer gave (set_ready_event) and sleeps: a worker that SIGTERM does not end, as
    one whose SIGTERM handler hangs."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _ready_event.set()
    time.sleep(120)


def sleep_through_sigterm(ready: Any) -> None:
    """A spawned process that ignores SIGTERM, tells `ready` (an Event) and sleeps: a worker
    that SIGTERM does not end."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    time.sleep(120)
