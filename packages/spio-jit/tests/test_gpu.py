"""The GPU tier: load and launch through the real driver, with torch and CuPy arrays.

Every test here is marked gpu; conftest.py skips them where the driver reports no device.
"""

from __future__ import annotations

import io
import threading
from typing import Any

import numpy as np
import pytest
from jit_testkit import SAXPY_SOURCE

import spio.jit as jit
from spio.jit import _launch

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

_BLOCK = 256

_SHARED_SOURCE = r"""
extern "C" __global__ void reverse_through_shared(const float* in, float* out, int n) {
    extern __shared__ float buffer[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        buffer[i] = in[i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = buffer[n - 1 - i];
    }
}

extern "C" __global__ void with_static_shared(float* out) {
    __shared__ float tile[1024];
    tile[threadIdx.x] = static_cast<float>(threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
"""

_SCALARS_SOURCE = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void scalars(signed char a, short b, int c, long long d,
                                   unsigned long long e, __half f, __nv_bfloat16 g, float h,
                                   double i, bool j, long long* out) {
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = d;
    out[4] = static_cast<long long>(e);
    out[5] = __half_as_ushort(f);
    out[6] = __bfloat16_as_ushort(g);
    out[7] = __float_as_uint(h);
    out[8] = __double_as_longlong(i);
    out[9] = j ? 1 : 0;
}
"""

_TEMPLATE_SOURCE = r"""
template <typename T, int FACTOR>
__global__ void scale(T* x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * static_cast<T>(FACTOR);
    }
}
"""


def _grid(n: int) -> int:
    return (n + _BLOCK - 1) // _BLOCK


def _saxpy(device: int = 0) -> jit.Kernel:
    arch = jit.device_info(device).arch
    return jit.compile(SAXPY_SOURCE, arch=arch).load(device=device).get_kernel("saxpy")


def _saxpy_args(x: Any, y: Any, n: int) -> tuple[Any, ...]:
    return (jit.float32(2.0), x, y, jit.int32(n))


def test_default_arch_is_the_current_devices() -> None:
    torch.zeros(1, device="cuda")
    code = jit.compile(SAXPY_SOURCE)
    assert code.arch == jit.device_info(torch.cuda.current_device()).arch


def test_saxpy_with_torch_tensors_on_the_current_stream() -> None:
    n = 10_000
    x = torch.randn(n, device="cuda:0")
    y = torch.randn(n, device="cuda:0")
    expected = 2.0 * x + y
    jit.launch(_saxpy(), _grid(n), _BLOCK, _saxpy_args(x, y, n))
    torch.cuda.synchronize()
    torch.testing.assert_close(y, expected)


def test_saxpy_on_a_torch_side_stream() -> None:
    n = 4096
    kernel = _saxpy()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.randn(n, device="cuda:0")
        y = torch.randn(n, device="cuda:0")
        expected = 2.0 * x + y
        assert _launch.default_stream_handle("torch", 0) == side.cuda_stream
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
    side.synchronize()
    torch.testing.assert_close(y, expected)
    # An explicit stream argument, outside the stream context.
    other = torch.cuda.Stream()
    other.wait_stream(torch.cuda.current_stream())
    expected = 2.0 * x + y
    torch.cuda.synchronize()
    jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n), stream=other)
    other.synchronize()
    torch.testing.assert_close(y, expected)


class _CudaArrayOnly:
    """Exposes a tensor only through __cuda_array_interface__ (like Numba's arrays)."""

    def __init__(self, tensor: Any) -> None:
        self._tensor = tensor
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


class _DLPackOnly:
    """Exposes a tensor only through DLPack."""

    def __init__(self, tensor: Any) -> None:
        self._tensor = tensor

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._tensor.__dlpack_device__()


@pytest.mark.parametrize("wrap", [_CudaArrayOnly, _DLPackOnly], ids=["cai", "dlpack"])
def test_saxpy_with_array_protocols(wrap: type) -> None:
    n = 3000
    x = torch.randn(n, device="cuda:0")
    y = torch.randn(n, device="cuda:0")
    expected = 2.0 * x + y
    torch.cuda.synchronize()
    jit.launch(_saxpy(), _grid(n), _BLOCK, _saxpy_args(wrap(x), wrap(y), n))
    torch.cuda.synchronize()
    torch.testing.assert_close(y, expected)


def test_saxpy_with_cupy_arrays_on_current_and_side_streams() -> None:
    cupy = pytest.importorskip("cupy")
    n = 5000
    kernel = _saxpy()
    with cupy.cuda.Device(0):
        x = cupy.random.rand(n, dtype=cupy.float32)
        y = cupy.random.rand(n, dtype=cupy.float32)
        expected = 2.0 * x + y
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
        cupy.cuda.get_current_stream().synchronize()
        cupy.testing.assert_allclose(y, expected, rtol=1e-6)
        with cupy.cuda.Stream(non_blocking=True) as side:
            expected = 2.0 * x + y
            assert _launch.default_stream_handle("cupy", 0) == side.ptr
            jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
            side.synchronize()
        cupy.testing.assert_allclose(y, expected, rtol=1e-6)
        explicit = cupy.cuda.Stream(non_blocking=True)
        expected = 2.0 * x + y
        cupy.cuda.Device(0).synchronize()
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n), stream=explicit)
        explicit.synchronize()
        cupy.testing.assert_allclose(y, expected, rtol=1e-6)


def test_cuda_graph_capture_and_replay_on_a_warmed_stream() -> None:
    n = 2048
    kernel = _saxpy()
    x = torch.ones(n, device="cuda:0")
    y = torch.zeros(n, device="cuda:0")
    capture = torch.cuda.Stream()
    capture.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(capture):  # warm-up launch, as torch's graph docs advise
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
    torch.cuda.current_stream().wait_stream(capture)
    torch.cuda.synchronize()
    y.zero_()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=capture):
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
    torch.cuda.synchronize()
    assert torch.count_nonzero(y) == 0  # capturing does not run the kernel
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.full_like(y, 6.0))


def test_cuda_graph_capture_on_torchs_own_capture_stream() -> None:
    n = 1024
    kernel = _saxpy()
    x = torch.ones(n, device="cuda:0")
    y = torch.zeros(n, device="cuda:0")
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # a stream spio-jit has not seen before the capture
        jit.launch(kernel, _grid(n), _BLOCK, (jit.float32(1.0), x, y, jit.int32(n)))
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.full_like(y, 2.0))


def test_dynamic_shared_memory_above_48_kib() -> None:
    info = jit.device_info(0)
    if info.max_shared_per_block_optin <= 48 * 1024:
        pytest.skip(f"{info.name} cannot opt in past 48 KiB")
    nbytes = min(100 * 1024, info.max_shared_per_block_optin)
    n = nbytes // 4
    kernel = (
        jit.compile(_SHARED_SOURCE, arch=info.arch)
        .load(device=0)
        .get_kernel("reverse_through_shared")
    )
    x = torch.randn(n, device="cuda:0")
    y = torch.zeros(n, device="cuda:0")
    jit.launch(kernel, 1, _BLOCK, (x, y, jit.int32(n)), shared_mem=nbytes)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, x.flip(0))
    assert kernel.attributes.max_dynamic_shared_mem >= nbytes
    with pytest.raises(ValueError, match="dynamic shared memory"):
        kernel.launch(
            1, _BLOCK, (x, y, jit.int32(n)), shared_mem=info.max_shared_per_block_optin + 1
        )


def test_explicit_shared_memory_opt_in() -> None:
    info = jit.device_info(0)
    kernel = (
        jit.compile(_SHARED_SOURCE, arch=info.arch)
        .load(device=0)
        .get_kernel("reverse_through_shared")
    )
    kernel.set_max_dynamic_shared_mem(info.max_shared_per_block_optin)
    assert kernel.attributes.max_dynamic_shared_mem == info.max_shared_per_block_optin


def test_kernel_attributes_and_occupancy() -> None:
    info = jit.device_info(0)
    kernel = (
        jit.compile(_SHARED_SOURCE, arch=info.arch).load(device=0).get_kernel("with_static_shared")
    )
    attributes = kernel.attributes
    assert attributes.static_shared_mem == 4096
    assert attributes.registers > 0
    assert 0 < attributes.max_threads_per_block <= 1024
    assert attributes.binary_version == int(info.arch[3:])
    assert attributes.ptx_version > 0
    assert attributes.local_mem >= 0
    blocks = kernel.max_active_blocks_per_sm(256)
    assert blocks >= 1
    assert 0.0 < kernel.occupancy(256) <= 1.0
    assert kernel.param_sizes == (8,)
    out = torch.zeros(1024, device="cuda:0")
    kernel.launch(1, 1024, (out,))
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.arange(1023, -1, -1, device="cuda:0", dtype=out.dtype))


def test_scalars_arrive_bit_exact() -> None:
    arch = jit.device_info(0).arch
    kernel = jit.compile(_SCALARS_SOURCE, arch=arch).load(device=0).get_kernel("scalars")
    out = torch.zeros(10, dtype=torch.int64, device="cuda:0")
    args = (
        jit.int8(-5),
        jit.int16(-300),
        jit.int32(-70_000),
        jit.int64(-(2**40)),
        2**64 - 1,
        jit.float16(1.5),
        jit.bfloat16(-2.0),
        jit.float32(0.1),
        jit.float64(0.1),
        True,
        out,
    )
    kernel.launch(1, 1, args)
    torch.cuda.synchronize()
    expected = [
        -5,
        -300,
        -70_000,
        -(2**40),
        -1,
        int(np.float16(1.5).view(np.uint16)),
        0xC000,
        int(np.float32(0.1).view(np.uint32)),
        int(np.float64(0.1).view(np.int64)),
        1,
    ]
    assert out.tolist() == expected


def test_template_kernels_by_name_expression() -> None:
    arch = jit.device_info(0).arch
    code = jit.compile(
        _TEMPLATE_SOURCE, arch=arch, name_expressions=["scale<float, 3>", "scale<int, 2>"]
    )
    module = code.load(device=0)
    values = torch.arange(100, device="cuda:0", dtype=torch.float32)
    integers = torch.arange(100, device="cuda:0", dtype=torch.int32)
    module.get_kernel("scale<float, 3>").launch(1, 128, (values, jit.int32(100)))
    module.get_kernel("scale<int, 2>").launch(1, 128, (integers, jit.int32(100)))
    torch.cuda.synchronize()
    assert values.tolist() == [3.0 * i for i in range(100)]
    assert integers.tolist() == [2 * i for i in range(100)]


def test_bad_launches_are_refused_before_reaching_the_driver() -> None:
    kernel = _saxpy()
    x = torch.zeros(10, device="cuda:0")
    with pytest.raises(TypeError, match="takes 4 arguments"):
        kernel.launch(1, 32, (jit.float32(1.0), x, x))
    with pytest.raises(TypeError, match="tensor on cpu"):
        kernel.launch(1, 32, (jit.float32(1.0), torch.zeros(10), x, jit.int32(10)))
    with pytest.raises(TypeError, match="Python float"):
        kernel.launch(1, 32, (1.0, x, x, jit.int32(10)))
    with pytest.raises(ValueError, match="threads"):
        kernel.launch(1, 2048, (jit.float32(1.0), x, x, jit.int32(10)))
    with pytest.raises(ValueError, match="dimension y"):
        kernel.launch((1, 100_000), 32, (jit.float32(1.0), x, x, jit.int32(10)))


def test_driver_errors_raise_cuda_error_with_the_name() -> None:
    with pytest.raises(jit.CudaError) as caught:
        jit.load(b"this is not a cubin", device=0).get_kernel("k")
    assert caught.value.name is not None
    assert caught.value.name.startswith("CUDA_ERROR_")


def test_cubin_of_another_major_arch_is_refused_at_load() -> None:
    major = jit.device_info(0).compute_capability[0]
    other = "sm_90" if major != 9 else "sm_80"
    with pytest.raises(ValueError, match="cannot run on cuda:0"):
        jit.compile(SAXPY_SOURCE, arch=other).load(device=0)


@pytest.mark.parametrize(
    "stream_kwargs",
    [{"stream": 0}, {}],
    # stream=None: torch's current stream there is the default stream, and no context is
    # current in the new thread while torch's current device already reads 0.
    ids=["explicit-default-stream", "torchs-current-stream"],
)
def test_launch_from_a_thread_without_a_current_context(stream_kwargs: dict[str, int]) -> None:
    n = 512
    kernel = _saxpy()
    x = torch.randn(n, device="cuda:0")
    y = torch.randn(n, device="cuda:0")
    expected = 2.0 * x + y
    torch.cuda.synchronize()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            kernel.launch(_grid(n), _BLOCK, _saxpy_args(x, y, n), **stream_kwargs)
        except BaseException as error:
            errors.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert not errors, errors
    torch.cuda.synchronize()
    torch.testing.assert_close(y, expected)


def test_repeated_launches_on_torchs_default_stream() -> None:
    n = 1000
    kernel = _saxpy()
    x = torch.ones(n, device="cuda:0")
    y = torch.zeros(n, device="cuda:0")
    if torch.cuda.current_stream().cuda_stream != 0:
        pytest.skip("torch's current stream is not the legacy default stream here")
    for _ in range(100):
        jit.launch(kernel, _grid(n), _BLOCK, (jit.float32(1.0), x, y, jit.int32(n)))
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.full_like(y, 100.0))


def test_second_device_when_present() -> None:
    if jit.device_count() < 2:
        pytest.skip("one GPU")
    n = 2048
    kernel = _saxpy(device=1)
    x = torch.randn(n, device="cuda:1")
    y = torch.randn(n, device="cuda:1")
    expected = 2.0 * x + y
    assert torch.cuda.current_device() == 0
    jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
    torch.cuda.synchronize(1)
    torch.testing.assert_close(y, expected)
    with torch.cuda.device(1):
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n))
    torch.cuda.synchronize(1)
    torch.testing.assert_close(y, 2.0 * x + expected)
    wrong = torch.zeros(n, device="cuda:0")
    with pytest.raises(ValueError, match="on cuda:0, but the kernel was loaded for cuda:1"):
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(wrong, y, n))
    with pytest.raises(ValueError, match="belongs to cuda:0"):
        jit.launch(kernel, _grid(n), _BLOCK, _saxpy_args(x, y, n), stream=torch.cuda.Stream(0))


def test_doctor_lists_the_gpus() -> None:
    from spio.jit._cli import doctor

    out = io.StringIO()
    assert doctor(out) == 0
    report = out.getvalue()
    info = jit.device_info(0)
    assert info.name in report
    assert info.arch in report
    assert "SMs" in report


def test_launch_overhead_benchmark_prints_its_numbers(
    capsys: pytest.CaptureFixture[str], record_property: Any
) -> None:
    """Reports spio.jit's host launch cost beside cuda.core's and torch's (not asserted)."""
    from spio.jit.bench_launch import measure

    cost = measure(device=0, batch=100, repeats=100, warmup=10)
    record_property("spio_jit_launch_us", round(cost.spio_jit_us, 3))
    record_property("cuda_core_launch_us", round(cost.cuda_core_us, 3))
    record_property("torch_add_us", round(cost.torch_add_us, 3))
    with capsys.disabled():
        print("\n" + cost.report())
    assert cost.spio_jit_us > 0
    assert cost.cuda_core_us > 0


# griddepcontrol written out (spio-dims wraps it as spio/arch/grid_dependency.cuh; spio-jit
# does not depend on spio-dims). Both instructions exist from sm_90 on.
_DEPENDENT_SOURCE = r"""
__device__ __forceinline__ void allow_next_grid_launch() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_previous_grids() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

// Lets the next grid start at once, then spins for spin_ns before writing its data.
extern "C" __global__ void slow_producer(float* data, unsigned long long* end_ns,
                                         long long spin_ns) {
    allow_next_grid_launch();
    wait_for_previous_grids();
    const unsigned long long start = global_ns();
    unsigned long long now = start;
    while (now - start < static_cast<unsigned long long>(spin_ns)) now = global_ns();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = static_cast<float>(i);
    end_ns[i] = global_ns();
}

// Notes when it started, waits for the producer, then copies its data.
extern "C" __global__ void consumer(const float* data, float* out,
                                    unsigned long long* start_ns) {
    const unsigned long long start = global_ns();
    wait_for_previous_grids();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = data[i];
    start_ns[i] = start;
}
"""


class _DependentPair:
    """The producer and consumer kernels with their buffers: 4 blocks of 128 threads."""

    blocks, threads = 4, 128

    def __init__(self) -> None:
        info = jit.device_info(0)
        module = jit.compile(_DEPENDENT_SOURCE, arch=info.arch).load(device=0)
        self.producer = module.get_kernel("slow_producer")
        self.consumer = module.get_kernel("consumer")
        n = self.blocks * self.threads
        self.data = torch.full((n,), -1.0, device="cuda:0")
        self.out = torch.zeros(n, device="cuda:0")
        self.end_ns = torch.zeros(n, dtype=torch.int64, device="cuda:0")
        self.start_ns = torch.zeros(n, dtype=torch.int64, device="cuda:0")
        self.expected = torch.arange(n, dtype=torch.float32, device="cuda:0")

    def launch(self, spin_ns: int, pdl: bool) -> None:
        """The producer in stream order, then the consumer (with pdl or not)."""
        grid, block = self.blocks, self.threads
        jit.launch(self.producer, grid, block, (self.data, self.end_ns, spin_ns))
        jit.launch(self.consumer, grid, block, (self.data, self.out, self.start_ns), pdl=pdl)


@pytest.mark.parametrize("pdl", [False, True], ids=["ordered", "pdl"])
def test_programmatic_dependent_launch_overlaps_and_waits(pdl: bool) -> None:
    """With pdl the consumer's blocks start during the producer's spin (sm_90 and newer) and
    still read the producer's data; without it they start after the producer ends."""
    pair = _DependentPair()
    # The first launches of a process pay one-time costs that would hide the overlap.
    for _ in range(2):
        pair.data.fill_(-1.0)
        pair.launch(200_000, pdl)
        torch.cuda.synchronize()
    torch.testing.assert_close(pair.out, pair.expected)
    overlapped = int(pair.start_ns.min()) < int(pair.end_ns.max())
    assert overlapped == (pdl and jit.device_info(0).compute_capability >= (9, 0))


def test_pdl_must_be_a_bool() -> None:
    kernel = _saxpy()
    x = torch.ones(4, device="cuda:0")
    with pytest.raises(TypeError, match="pdl must be a bool"):
        jit.launch(kernel, 1, _BLOCK, _saxpy_args(x, x, 4), pdl=1)  # type: ignore[arg-type]


def test_spread_shared_mem_caps_blocks_per_sm_of_a_one_wave_grid() -> None:
    info = jit.device_info(0)
    kernel = _saxpy()  # tiny: dozens of 32-thread blocks fit on an SM
    natural = kernel.max_active_blocks_per_sm(32)
    assert natural > 2
    two_per_sm = 2 * info.sm_count
    padded = jit.spread_shared_mem(kernel, two_per_sm, 32)
    assert padded > 0
    assert kernel.max_active_blocks_per_sm(32, padded) == 2
    n = two_per_sm * 32
    x = torch.ones(n, device="cuda:0")
    y = torch.zeros(n, device="cuda:0")
    jit.launch(kernel, two_per_sm, 32, _saxpy_args(x, y, n), shared_mem=padded)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.full_like(y, 2.0))
    # A grid of a full wave or more, and a given padding already large enough, stay as they are.
    assert jit.spread_shared_mem(kernel, natural * info.sm_count, 32, 16) == 16
    assert jit.spread_shared_mem(kernel, two_per_sm, 32, padded + 16) == padded + 16


def test_pdl_launches_capture_into_a_cuda_graph() -> None:
    pair = _DependentPair()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # plans the launches outside the capture
        pair.launch(1000, pdl=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        pair.launch(100_000, pdl=True)
    pair.data.fill_(-1.0)
    pair.out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(pair.out, pair.expected)


_ALL_ARRIVE_SOURCE = r"""
// Every block adds one to a zeroed counter, then waits until all have: it finishes only when
// the whole grid is resident at once. Then it reads its neighbour's block index.
extern "C" __global__ void all_arrive(unsigned int* counter, int* ids, int* neighbours) {
    if (threadIdx.x == 0) {
        ids[blockIdx.x] = blockIdx.x;
        __threadfence();
        atomicAdd(counter, 1u);
        while (atomicAdd(counter, 0u) < gridDim.x) __nanosleep(100);
        __threadfence();
        neighbours[blockIdx.x] = __ldcg(ids + (blockIdx.x + 1) % gridDim.x);
    }
}
"""


@pytest.mark.parametrize("pdl", [False, True], ids=["ordered", "pdl"])
def test_cooperative_launch_places_the_whole_grid_at_once(pdl: bool) -> None:
    info = jit.device_info(0)
    kernel = jit.compile(_ALL_ARRIVE_SOURCE, arch=info.arch).load(device=0).get_kernel("all_arrive")
    blocks = kernel.max_active_blocks_per_sm(256, 8 * 1024) * info.sm_count
    counter = torch.zeros(1, dtype=torch.int32, device="cuda:0")
    ids = torch.full((blocks,), -1, dtype=torch.int32, device="cuda:0")
    neighbours = torch.full_like(ids, -1)
    args = (counter, ids, neighbours)
    jit.launch(kernel, blocks, 256, args, shared_mem=8 * 1024, pdl=pdl, cooperative=True)
    torch.cuda.synchronize()
    assert int(counter) == blocks
    expected = (torch.arange(blocks, device="cuda:0", dtype=torch.int32) + 1) % blocks
    assert torch.equal(neighbours, expected)
    with pytest.raises(ValueError, match="can be resident at once"):
        jit.launch(kernel, blocks + 1, 256, args, shared_mem=8 * 1024, cooperative=True)


def test_occupancy_past_48_kib_counts_blocks_before_any_launch() -> None:
    # A fresh kernel (no launch has opted it in): the driver alone would count 0 blocks.
    code = jit.compile(SAXPY_SOURCE, arch=jit.device_info(0).arch, defines={"FRESH_KERNEL": 1})
    kernel = code.load(device=0).get_kernel("saxpy")
    assert kernel.attributes.max_dynamic_shared_mem <= 48 * 1024
    assert kernel.max_active_blocks_per_sm(256, 60 * 1024) >= 1
    assert kernel.attributes.max_dynamic_shared_mem == 60 * 1024
