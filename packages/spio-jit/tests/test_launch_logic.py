"""The load and launch logic, run against a fake driver and a fake cuda.core (no GPU).

These tests check spio-jit's own decisions (argument packing, config and stream caching,
context handling, shared-memory opt-in, launch limits, error translation) by recording
the driver and cuda.core calls they make. The real calls run in the GPU tier (test_gpu.py).
"""

# ruff: noqa: N802  (FakeDriver's methods carry the driver API's names)

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pytest
from jit_testkit import SAXPY_SOURCE

import spio.jit as jit
from spio.jit import _driver, _launch

_CTX = {0: 0xC0, 1: 0xC1}
_STREAM_DEVICE = {0x5000: 0, 0x5001: 1}
_ATTRS = {
    "CU_FUNC_ATTRIBUTE_NUM_REGS": 32,
    "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES": 1024,
    "CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES": 0,
    "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES": 0,
    "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK": 512,
    "CU_FUNC_ATTRIBUTE_PTX_VERSION": 90,
    "CU_FUNC_ATTRIBUTE_BINARY_VERSION": 90,
    "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES": 48 * 1024 - 1024,
}
_DEVICE_ATTRS = {
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": 9,
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": 0,
    "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT": 132,
    "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE": 50 * 2**20,
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK": 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X": 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y": 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z": 64,
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X": 2**31 - 1,
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y": 65535,
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z": 65535,
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK": 48 * 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 227 * 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR": 2048,
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 228 * 1024,
    "CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK": 1024,
}


class FakeDriver:
    """The cuda.bindings.driver calls spio-jit makes, answered from the tables above."""

    def __init__(self) -> None:
        from cuda.bindings import driver

        self.real = driver
        self.CUfunction_attribute = driver.CUfunction_attribute
        self.CUdevice_attribute = driver.CUdevice_attribute
        self.CUpointer_attribute = driver.CUpointer_attribute
        self.CUresult = driver.CUresult
        self.CUkernel = driver.CUkernel
        self.CUstream = driver.CUstream
        self.stack: list[int] = []
        self.calls: list[tuple[Any, ...]] = []
        self.set_attributes: list[tuple[str, int]] = []

    def _ok(self, *values: Any) -> tuple[Any, ...]:
        return (self.real.CUresult.CUDA_SUCCESS, *values)

    def cuDeviceGetCount(self) -> tuple[Any, ...]:
        return self._ok(2)

    def cuDeviceGetName(self, length: int, device: int) -> tuple[Any, ...]:
        return self._ok(b"Fake H100\0\0\0")

    def cuDeviceGetAttribute(self, attribute: Any, device: int) -> tuple[Any, ...]:
        return self._ok(_DEVICE_ATTRS[attribute.name])

    def cuDeviceTotalMem(self, device: int) -> tuple[Any, ...]:
        return self._ok(80 * 2**30)

    def cuDevicePrimaryCtxRetain(self, device: int) -> tuple[Any, ...]:
        return self._ok(_CTX[device])

    def cuCtxGetCurrent(self) -> tuple[Any, ...]:
        return self._ok(self.stack[-1] if self.stack else None)

    def cuCtxPushCurrent(self, context: Any) -> tuple[Any, ...]:
        self.stack.append(int(context))
        self.calls.append(("push", int(context)))
        return self._ok()

    def cuCtxPopCurrent(self) -> tuple[Any, ...]:
        self.calls.append(("pop",))
        return self._ok(self.stack.pop())

    def cuCtxGetDevice(self) -> tuple[Any, ...]:
        return self._ok({v: k for k, v in _CTX.items()}[self.stack[-1]])

    def cuStreamGetCtx(self, stream: Any) -> tuple[Any, ...]:
        return self._ok(_CTX[_STREAM_DEVICE[int(stream)]])

    def cuKernelGetFunction(self, kernel: Any) -> tuple[Any, ...]:
        assert self.stack, "cuKernelGetFunction needs a current context"
        return self._ok(("function", int(kernel), self.stack[-1]))

    def cuKernelGetAttribute(self, attribute: Any, kernel: Any, device: int) -> tuple[Any, ...]:
        for name, value in self.set_attributes:
            if name == attribute.name:
                return self._ok(value)
        return self._ok(_ATTRS[attribute.name])

    def cuKernelSetAttribute(
        self, attribute: Any, value: int, kernel: Any, device: int
    ) -> tuple[Any, ...]:
        self.set_attributes.append((attribute.name, value))
        return self._ok()

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(
        self, function: Any, threads: int, shared: int
    ) -> tuple[Any, ...]:
        assert function[0] == "function"
        # Like the driver: no block fits that asks for more than the kernel's opt-in limit.
        if (
            shared
            > self.cuKernelGetAttribute(
                self.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, None, 0
            )[1]
        ):
            return self._ok(0)
        # Threads allow half of the SM's 2048 (as registers would); shared memory counts the
        # kernel's static 1 KiB and the 1 KiB reserved per block.
        per_block = shared + _ATTRS["CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"] + 1024
        by_shared = _DEVICE_ATTRS["CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"]
        return self._ok(min(2048 // threads // 2, by_shared // per_block))


class FakeCoreError(Exception):
    """Stands in for cuda.core's CUDAError (matched by name and module)."""


FakeCoreError.__name__ = "CUDAError"
FakeCoreError.__module__ = "cuda.core._utils.cuda_utils"


class FakeCoreKernel:
    def __init__(self, name: str, sizes: tuple[int, ...] | None) -> None:
        self.handle = 0xABC0 + len(name)
        self.name = name
        self._sizes = sizes

    @property
    def arguments_info(self) -> list[Any]:
        if self._sizes is None:
            raise NotImplementedError("driver too old")
        return [SimpleNamespace(offset=8 * i, size=s) for i, s in enumerate(self._sizes)]


class FakeObjectCode:
    """cuda.core's ObjectCode as 1.2.0 behaves: a mapped name must already be bytes."""

    kernels: ClassVar[dict[str, tuple[int, ...] | None]] = {"saxpy": (4, 8, 8, 4)}

    def __init__(self, cubin: bytes, name: str, symbol_mapping: dict[str, Any] | None) -> None:
        self.symbol_mapping = symbol_mapping or {}

    @classmethod
    def from_cubin(
        cls, cubin: bytes, *, name: str = "", symbol_mapping: dict[str, Any] | None = None
    ) -> Any:
        return cls(cubin, name, symbol_mapping)

    def get_kernel(self, name: str) -> FakeCoreKernel:
        try:
            symbol = self.symbol_mapping[name]
        except KeyError:
            symbol = name.encode()
        if not isinstance(symbol, bytes):  # Cython's <const char*> cast of a str
            raise TypeError(f"expected bytes, {type(symbol).__name__} found")
        if symbol.decode() not in self.kernels:
            raise FakeCoreError("CUDA_ERROR_NOT_FOUND: named symbol not found")
        return FakeCoreKernel(symbol.decode(), self.kernels[symbol.decode()])


class FakeStream:
    def __init__(self, handle: int) -> None:
        self.handle = handle


class Recorder:
    """cuda.core's launch: records each launch and the context current at the time."""

    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver
        self.launches: list[tuple[Any, ...]] = []
        self.contexts: list[int | None] = []
        self.fail_with: Exception | None = None

    def launch(self, stream: Any, config: Any, kernel: Any, *args: Any) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        current = self.driver.stack[-1] if self.driver.stack else None
        if not isinstance(stream, FakeStream) and current is None:
            # A default stream runs in the current context; the driver refuses without one.
            raise FakeCoreError("CUDA_ERROR_INVALID_CONTEXT: invalid device context")
        self.launches.append((stream, config, kernel, args))
        self.contexts.append(current)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    import cuda.core

    driver = FakeDriver()
    recorder = Recorder(driver)
    device_of = {context: device for device, context in _CTX.items()}
    monkeypatch.setattr(_driver, "bindings", lambda: driver)
    monkeypatch.setattr(cuda.core, "ObjectCode", FakeObjectCode)
    monkeypatch.setattr(cuda.core, "launch", recorder.launch)
    monkeypatch.setattr(cuda.core, "Stream", SimpleNamespace(from_handle=FakeStream))
    monkeypatch.setattr(_launch, "_torch_raw_stream", lambda device: 0x5000 + device)
    # cudaGetDevice: the current context's device, else the thread's default, 0.
    monkeypatch.setattr(
        _launch,
        "_torch_current_device",
        lambda: device_of[driver.stack[-1]] if driver.stack else 0,
    )
    _driver.device_info.cache_clear()
    _driver._primary.clear()
    _launch.forget_streams()
    yield SimpleNamespace(driver=driver, recorder=recorder)
    _driver.device_info.cache_clear()
    _driver._primary.clear()
    _launch.forget_streams()


def _tensor(pointer: int, device: int = 0) -> Any:
    tensor_type = type(
        "FakeTensor",
        (),
        {
            "__module__": "torch.fake",
            "data_ptr": lambda self: pointer,
            "get_device": lambda self: device,
        },
    )
    return tensor_type()


@pytest.fixture
def saxpy(fake: SimpleNamespace) -> jit.Kernel:
    code = jit.compile(SAXPY_SOURCE, arch="sm_90")
    return code.load(device=0).get_kernel("saxpy")


def test_get_kernel_loads_into_the_primary_context_and_restores(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    assert ("push", _CTX[0]) in fake.driver.calls
    assert fake.driver.stack == []  # the caller's (absent) context is restored
    assert saxpy.param_sizes == (4, 8, 8, 4)
    assert saxpy.module.get_kernel("saxpy") is saxpy


def test_attributes_and_occupancy(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    attributes = saxpy.attributes
    assert attributes.registers == 32
    assert attributes.static_shared_mem == 1024
    assert attributes.max_threads_per_block == 512
    assert saxpy.max_active_blocks_per_sm(256) == 4
    assert saxpy.occupancy(256) == pytest.approx(4 * 256 / 2048)


def test_occupancy_past_48_kib_opts_in_as_a_launch_would(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    # Asked before any launch opted in, the driver would count 0 blocks of 60 KiB.
    assert saxpy.max_active_blocks_per_sm(256, 60 * 1024) == 228 // 62
    assert ("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 60 * 1024) in (
        fake.driver.set_attributes
    )
    with pytest.raises(ValueError, match="allows 232448 bytes per block"):
        saxpy.max_active_blocks_per_sm(256, 240 * 1024)
    with pytest.raises(ValueError, match="shared_mem must be a non-negative int, got -1"):
        saxpy.max_active_blocks_per_sm(256, -1)


def test_spread_shared_mem_pads_one_wave_grids(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    # 256 threads: 4 blocks per SM by threads; a grid of 2 per SM (264 blocks) is spread by
    # half an SM's shared memory less the static and reserved KiB.
    padded = jit.spread_shared_mem(saxpy, 2 * 132, 256)
    assert padded == 228 * 1024 // 2 - 2048
    assert saxpy.max_active_blocks_per_sm(256, padded) == 2
    assert ("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", padded) in fake.driver.set_attributes
    assert jit.spread_shared_mem(saxpy, 3 * 132 + 1, 256) == 0  # 4 per SM is what it needs
    assert jit.spread_shared_mem(saxpy, 4 * 132, 256, 512) == 512  # a whole wave
    assert jit.spread_shared_mem(saxpy, 2 * 132, 256, padded + 1) == padded + 1
    with pytest.raises(ValueError, match="blocks must be a positive int, got 0"):
        jit.spread_shared_mem(saxpy, 0, 256)


def test_cooperative_grid_larger_than_the_device_holds_is_refused(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    per_sm = saxpy.max_active_blocks_per_sm(256)
    args = (jit.float32(1), 0, 0, jit.int32(0))
    with pytest.raises(ValueError, match=f"at most {per_sm * 132} blocks can be resident"):
        jit.launch(saxpy, per_sm * 132 + 1, 256, args, cooperative=True)
    with pytest.raises(TypeError, match="cooperative must be a bool"):
        jit.launch(saxpy, 1, 256, args, cooperative=1)  # type: ignore[arg-type]
    assert not fake.recorder.launches


def test_launch_packs_arguments_on_torchs_current_stream(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    x, y = _tensor(0x1000), _tensor(0x2000)
    jit.launch(saxpy, 4, 128, (jit.float32(2.0), x, y, jit.int32(512)))
    jit.launch(saxpy, 4, 128, (jit.float32(2.0), x, y, jit.int32(512)))
    (stream, config, kernel, args), second = fake.recorder.launches
    assert isinstance(stream, FakeStream)
    assert stream.handle == 0x5000
    assert config.grid == (4, 1, 1)
    assert config.block == (128, 1, 1)
    assert config.shmem_size == 0
    assert kernel.name == "saxpy"
    assert args[1:3] == (0x1000, 0x2000)
    assert isinstance(args[0], np.float32)
    assert second[0] is stream  # the stream wrapper is cached per handle
    assert second[1] is config  # so is the launch config


def test_contextless_stream_runs_in_the_kernels_context(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    fake.driver.calls.clear()
    saxpy.launch(1, 32, (jit.float32(1), 0, 0, jit.int32(0)), stream=0)
    assert fake.driver.calls == [("push", _CTX[0]), ("pop",)]
    fake.driver.stack.append(_CTX[0])  # now the right context is current: no push
    fake.driver.calls.clear()
    saxpy.launch(1, 32, (jit.float32(1), 0, 0, jit.int32(0)), stream=0)
    assert fake.driver.calls == []


def test_stream_objects_are_accepted(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    args = (jit.float32(1), 0, 0, jit.int32(0))
    saxpy.launch(1, 32, args, stream=SimpleNamespace(cuda_stream=0x5000))  # torch.cuda.Stream
    saxpy.launch(1, 32, args, stream=SimpleNamespace(ptr=0x5000))  # cupy.cuda.Stream
    saxpy.launch(1, 32, args, stream=SimpleNamespace(__cuda_stream__=lambda: (0, 0x5000)))
    assert {launch[0].handle for launch in fake.recorder.launches} == {0x5000}
    with pytest.raises(TypeError, match="stream must be None"):
        saxpy.launch(1, 32, args, stream="default")


def test_stream_of_another_device_is_refused(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    with pytest.raises(ValueError, match="belongs to cuda:1, but the kernel was loaded for cuda:0"):
        saxpy.launch(1, 32, (jit.float32(1), 0, 0, jit.int32(0)), stream=0x5001)
    assert not fake.recorder.launches


def test_large_dynamic_shared_memory_opts_in(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    saxpy.launch(1, 32, (jit.float32(1), 0, 0, jit.int32(0)), shared_mem=100 * 1024)
    assert fake.driver.set_attributes == [
        ("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 100 * 1024)
    ]
    assert saxpy.attributes.max_dynamic_shared_mem == 100 * 1024
    with pytest.raises(ValueError, match="at most 231424"):
        saxpy.launch(1, 32, (jit.float32(1), 0, 0, jit.int32(0)), shared_mem=227 * 1024)


@pytest.mark.parametrize(
    ("grid", "block", "match"),
    [
        (1, 1024, "can launch at most 512 threads per block"),
        ((1, 70000), 32, "70000 blocks in dimension y; cuda:0 allows at most 65535 blocks"),
        (1, (1, 1, 128), "128 threads in dimension z; cuda:0 allows at most 64 threads"),
        (1, (32, 32, 2), "2048 threads per block; cuda:0 allows at most 1024 threads"),
        (0, 32, "at least 1"),
        ((1, 2, 3, 4), 32, "1 to 3 ints"),
    ],
)
def test_launch_too_large_is_refused_before_launching(
    fake: SimpleNamespace, saxpy: jit.Kernel, grid: Any, block: Any, match: str
) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        saxpy.launch(grid, block, (jit.float32(1), 0, 0, jit.int32(0)))
    assert not fake.recorder.launches


def test_list_dimensions_work(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    saxpy.launch([2, 2], [16, 2], [jit.float32(1), 0, 0, jit.int32(0)])
    assert fake.recorder.launches[0][1].grid == (2, 2, 1)


def test_wrong_arguments_are_refused_before_launching(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    with pytest.raises(TypeError, match="takes 4 arguments"):
        saxpy.launch(1, 32, (jit.float32(1), 0, 0))
    with pytest.raises(TypeError, match="argument 3"):
        saxpy.launch(1, 32, (jit.float32(1), 0, 0, 7))
    with pytest.raises(ValueError, match="on cuda:1"):
        saxpy.launch(1, 32, (jit.float32(1), _tensor(0x10, device=1), 0, jit.int32(1)))
    assert not fake.recorder.launches


@pytest.mark.parametrize(
    ("kernel", "shown"), [(None, "NoneType None"), ("saxpy", "str 'saxpy'"), (object(), "object")]
)
def test_launch_of_what_is_no_kernel_is_a_type_error(kernel: object, shown: str) -> None:
    """Regression: launch(None, ...) and launch("k", ...) gave AttributeError "... has no
    attribute 'launch'"."""
    with pytest.raises(
        TypeError, match=rf"kernel must be a spio.jit.Kernel \(Module.get_kernel\), got {shown}$"
    ):
        jit.launch(kernel, 1, 32, ())  # type: ignore[arg-type]


def test_launch_takes_a_kernel(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    jit.launch(saxpy, 1, 32, (jit.float32(1), 0, 0, jit.int32(0)))
    assert len(fake.recorder.launches) == 1


def test_driver_errors_become_cuda_errors(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    fake.recorder.fail_with = FakeCoreError("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many")
    with pytest.raises(jit.CudaError) as caught:
        saxpy.launch(1, 32, (jit.float32(1), 0, 0, jit.int32(0)))
    assert caught.value.name == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    assert caught.value.code == 701
    assert "launch of kernel 'saxpy'" in str(caught.value)


def test_unknown_kernel_name_lists_the_name_expressions(fake: SimpleNamespace) -> None:
    source = "template <int N> __global__ void k(int* p) { *p = N; }\n"
    code = jit.compile(source, arch="sm_90", name_expressions=["k<1>"])
    module = code.load(device=0)
    with pytest.raises(LookupError, match=r"has no kernel 'missing'.*'k<1>'"):
        module.get_kernel("missing")


def test_cubin_for_another_arch_is_refused_at_load(fake: SimpleNamespace) -> None:
    code = jit.compile(SAXPY_SOURCE, arch="sm_80")
    with pytest.raises(ValueError, match="cannot run on cuda:0"):
        code.load(device=0)
    ptx = jit.compile(SAXPY_SOURCE, arch="sm_90", target="ptx")
    with pytest.raises(ValueError, match="is PTX"):
        jit.load(ptx, device=0)
    with pytest.raises(ValueError, match="does not exist"):
        jit.load(jit.compile(SAXPY_SOURCE, arch="sm_90"), device=2)


def test_without_parameter_info_launch_still_works(fake: SimpleNamespace) -> None:
    FakeObjectCode.kernels["old_driver"] = None
    try:
        kernel = jit.load(b"\x7fELF...", device=1).get_kernel("old_driver")
        assert kernel.param_sizes is None
        kernel.launch(1, 32, (0x10, jit.int32(3)), stream=0x5001)
        assert fake.recorder.launches[0][3] == (0x10, np.int32(3))
    finally:
        del FakeObjectCode.kernels["old_driver"]


def test_default_arch_and_device_info_come_from_the_driver(fake: SimpleNamespace) -> None:
    info = jit.device_info(1)
    assert info.arch == "sm_90"
    assert info.sm_count == 132
    assert info.name == "Fake H100"
    code = jit.compile(SAXPY_SOURCE)  # arch=None: the current (first) device's
    assert code.arch == "sm_90"


def test_name_expressions_load_under_cuda_core_1_2_0_rules(
    fake: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression: the lowered names went to cuda.core as a str symbol_mapping, which 1.2.0
    # hands to the driver as is ("TypeError: expected bytes, str found").
    source = "template <int N> __global__ void k(int* p) { *p = N; }\n"
    code = jit.compile(source, arch="sm_90", name_expressions=["k<1>"])
    mangled = code.lowered_names["k<1>"]
    monkeypatch.setitem(FakeObjectCode.kernels, mangled, (8,))
    module = code.load(device=0)
    assert module.get_kernel("k<1>").param_sizes == (8,)
    assert module.get_kernel(mangled).param_sizes == (8,)
    assert all(isinstance(v, bytes) for v in module._object.symbol_mapping.values())


def test_too_large_block_message_says_threads(fake: SimpleNamespace, saxpy: jit.Kernel) -> None:
    # Regression: it said "dimension x is 2048", which does not say what is too large.
    args = (jit.float32(1), 0, 0, jit.int32(0))
    with pytest.raises(ValueError, match="threads") as caught:
        saxpy.launch(1, 2048, args)
    assert str(caught.value) == (
        "block=2048 asks for 2048 threads in dimension x; cuda:0 allows at most 1024 threads "
        "per block in x"
    )
    with pytest.raises(ValueError, match=r"grid=\(1, 1, 70000\) asks for 70000 blocks"):
        saxpy.launch((1, 1, 70000), 32, args)


def _torch_on_default_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make torch's current stream the legacy default stream (handle 0), as in plain torch."""
    monkeypatch.setattr(_launch, "_torch_raw_stream", lambda device: 0)


def test_torch_default_stream_asks_torch_not_the_driver_whose_context_is_current(
    fake: SimpleNamespace, saxpy: jit.Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    _torch_on_default_stream(monkeypatch)
    asked: list[int] = []
    monkeypatch.setattr(saxpy, "_get_current_context", lambda: asked.append(1))
    fake.driver.stack.append(_CTX[0])  # torch ran on cuda:0 in this thread
    fake.driver.calls.clear()
    x = _tensor(0x1000)
    for _ in range(3):
        saxpy.launch(4, 128, (jit.float32(2.0), x, x, jit.int32(512)))
    assert fake.driver.calls == []  # no push or pop
    assert not asked
    assert fake.recorder.contexts == [_CTX[0]] * 3


def test_torch_default_stream_while_another_device_is_current(
    fake: SimpleNamespace, saxpy: jit.Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    _torch_on_default_stream(monkeypatch)
    fake.driver.stack.append(_CTX[1])  # torch's current device is cuda:1
    fake.driver.calls.clear()
    x = _tensor(0x1000)
    saxpy.launch(4, 128, (jit.float32(2.0), x, x, jit.int32(512)))
    assert fake.driver.calls == [("push", _CTX[0]), ("pop",)]
    assert fake.recorder.contexts == [_CTX[0]]
    assert fake.driver.stack == [_CTX[1]]


def test_torch_default_stream_in_a_thread_with_no_context(
    fake: SimpleNamespace, saxpy: jit.Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cudaGetDevice says 0 with no context current; the driver refuses the launch, which is
    # retried with the kernel's context current.
    _torch_on_default_stream(monkeypatch)
    fake.driver.calls.clear()
    x = _tensor(0x1000)
    saxpy.launch(4, 128, (jit.float32(2.0), x, x, jit.int32(512)))
    assert fake.driver.calls == [("push", _CTX[0]), ("pop",)]
    assert fake.recorder.contexts == [_CTX[0]]
    assert fake.driver.stack == []


def test_values_are_checked_on_every_launch_of_a_known_plan(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    x = _tensor(0x1000)
    saxpy.launch(4, 128, (jit.float32(2.0), x, x, jit.int32(512)))
    assert len(saxpy._plans) == 1
    elsewhere = type(x)()  # the same type, so the same plan
    type(x).get_device = lambda self: 1 if self is elsewhere else 0  # type: ignore[method-assign]
    with pytest.raises(ValueError, match=r"argument 2 .* on cuda:1, but the kernel .* cuda:0"):
        saxpy.launch(4, 128, (jit.float32(2.0), x, elsewhere, jit.int32(512)))
    type(x).get_device = lambda self: -1 if self is elsewhere else 0  # type: ignore[method-assign]
    type(x).device = "cpu"  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=r"argument 2 .* a tensor on cpu"):
        saxpy.launch(4, 128, (jit.float32(2.0), x, elsewhere, jit.int32(512)))
    saxpy.launch(4, 128, (jit.float32(2.0), 0x10, 0x20, jit.int32(512)))
    assert len(saxpy._plans) == 2  # tensors, and ints for the pointers
    with pytest.raises(ValueError, match=r"argument 1 .* does not fit in 64 bits"):
        saxpy.launch(4, 128, (jit.float32(2.0), 2**64, 0, jit.int32(512)))
    assert len(fake.recorder.launches) == 2


def test_lists_and_tuples_of_one_shape_share_a_plan(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    args = [jit.float32(1), 0, 0, jit.int32(0)]
    saxpy.launch((2, 2), (16, 2), args)
    saxpy.launch([2, 2], [16, 2], args)
    saxpy.launch([2, 2], [16, 2], args)
    assert len(saxpy._plans) == 1
    first, second, third = (launch[1] for launch in fake.recorder.launches)
    assert first is second is third


def test_iterators_are_refused_even_after_a_plan_exists(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    args = (jit.float32(1), 0, 0, jit.int32(0))
    saxpy.launch([1], 32, args)
    with pytest.raises(TypeError, match="must be a tuple or list"):
        saxpy.launch([1], 32, iter(args))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a tuple or list"):
        saxpy.launch(1, 32, iter(()))  # type: ignore[arg-type]


def test_lowering_the_shared_memory_limit_rechecks_launches(
    fake: SimpleNamespace, saxpy: jit.Kernel
) -> None:
    args = (jit.float32(1), 0, 0, jit.int32(0))
    saxpy.launch(1, 32, args, shared_mem=100 * 1024)
    saxpy.set_max_dynamic_shared_mem(1024)
    fake.driver.set_attributes.clear()
    saxpy.launch(1, 32, args, shared_mem=100 * 1024)  # opts in again
    assert fake.driver.set_attributes == [
        ("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 100 * 1024)
    ]
