"""Loaded code: Module (a cubin in a device's primary context) and Kernel (one entry point).

Loading and launching go through cuda.core (ObjectCode, Kernel, LaunchConfig, launch).
Kernel attributes, the shared-memory opt-in and occupancy use the driver API directly
(cuKernelGetAttribute and friends), whose signatures are stable across cuda.core releases.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spio.jit import _driver, _launch
from spio.jit._args import ArgError, ArgPacker
from spio.jit._compile import CompiledCode
from spio.jit._cuda_core import cuda_core
from spio.jit._launcher import Launcher, Replan, write_launcher
from spio.jit._options import parse_arch

# A launch's shape: (grid, block, shared_mem, pdl, cooperative), as Kernel.launch got them.
LaunchShape = tuple[Any, Any, Any, bool, bool]
_MAX_CACHED_PLANS = 256
# Without opting in, a block may use this much shared memory (static + dynamic).
_DEFAULT_SHARED_LIMIT = 48 * 1024


@dataclass(frozen=True)
class KernelAttributes:
    """Resource use and limits of a kernel on its device.

    Attributes:
        registers: registers per thread.
        static_shared_mem: bytes of statically declared shared memory per block.
        max_dynamic_shared_mem: bytes of dynamic shared memory a launch may request now
            (raised by Kernel.set_max_dynamic_shared_mem or an automatic opt-in).
        const_mem: bytes of user constant memory.
        local_mem: bytes of local memory (spills, stack) per thread.
        max_threads_per_block: the largest block this kernel can launch with (registers
            included).
        ptx_version: PTX ISA version it was compiled from, e.g. 90 for sm_90's.
        binary_version: the SM version of the binary, e.g. 90.
    """

    registers: int
    static_shared_mem: int
    max_dynamic_shared_mem: int
    const_mem: int
    local_mem: int
    max_threads_per_block: int
    ptx_version: int
    binary_version: int


def _dims(value: int | Sequence[int], what: str) -> tuple[int, int, int]:
    dims: tuple[int, ...]
    if isinstance(value, int) and not isinstance(value, bool):
        dims = (value,)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        dims = tuple(value)
    else:
        raise TypeError(f"{what} must be an int or 1 to 3 ints, got {value!r}")
    if not 1 <= len(dims) <= 3 or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in dims
    ):
        raise TypeError(f"{what} must be an int or 1 to 3 ints, got {value!r}")
    if any(d < 1 for d in dims):
        raise ValueError(f"{what}={value!r}: every dimension must be at least 1")
    padded = (*dims, 1, 1)
    return (padded[0], padded[1], padded[2])


def _check_arch_fits(arch: str, device: int) -> None:
    if not arch:
        return
    number, suffix = parse_arch(arch)
    major, minor = number // 10, number % 10
    info = _driver.device_info(device)
    dev_major, dev_minor = info.compute_capability
    if suffix == "a":
        runs = (major, minor) == (dev_major, dev_minor)
    else:
        runs = major == dev_major and minor <= dev_minor
    if not runs:
        raise ValueError(
            f"a cubin for {arch} cannot run on cuda:{device} ({info.name}, {info.arch}); "
            f"compile with arch={info.arch!r} (or arch=None on that device)"
        )


class Kernel:
    """One kernel of a loaded Module, ready to launch.

    Built by Module.get_kernel. Holds what the launch path needs precomputed: the
    argument packer (from the kernel's parameter sizes), the cuda.core kernel, and a plan
    per (grid, block, shared_mem, pdl, cooperative, argument types): a launch function
    written for them (see _launcher), holding the checked LaunchConfig.
    """

    def __init__(self, module: Module, name: str, core_kernel: Any) -> None:
        core_launch = cuda_core().launch

        self.name = name
        self.module = module
        self.device = module.device
        self._core = core_kernel
        self._core_launch = core_launch
        driver = _driver.bindings()
        self._handle = driver.CUkernel(int(core_kernel.handle))
        self._context = int(_driver.primary_context(self.device))
        self._get_current_context = driver.cuCtxGetCurrent
        with _driver.using_device(self.device):
            # Loads the code into the primary context now rather than at the first launch,
            # which may be inside a CUDA graph capture.
            self._function = _driver.check(
                driver.cuKernelGetFunction(self._handle), "cuKernelGetFunction"
            )
            sizes = self._param_sizes()
        self._packer = ArgPacker(name, self.device, sizes)
        # Plans by (grid, block, shared_mem, pdl, cooperative, argument types), and the latest
        # plan of each (grid, block, shared_mem, pdl, cooperative): the launch path's one
        # dictionary look-up.
        self._plans: dict[Any, Launcher] = {}
        self._latest: dict[Any, Launcher] = {}
        self._lock = threading.Lock()
        self._max_dynamic: int | None = None
        self._max_threads_per_block: int | None = None

    def __repr__(self) -> str:
        return f"<spio.jit.Kernel {self.name!r} of {self.module.code.name!r} on cuda:{self.device}>"

    def _param_sizes(self) -> tuple[int, ...] | None:
        # cuKernelGetParamInfo needs a 12.4+ driver; without it argument counts and sizes
        # are not checked, only each argument's own type.
        try:
            infos = self._core.arguments_info
        except Exception:
            return None
        sizes = []
        for param in infos:
            size = getattr(param, "size", None)
            sizes.append(int(size if size is not None else param[1]))
        return tuple(sizes)

    @property
    def param_sizes(self) -> tuple[int, ...] | None:
        """Return the kernel's parameter sizes in bytes, or None if the driver cannot say."""
        return self._packer.param_sizes

    def _attribute(self, name: str) -> int:
        driver = _driver.bindings()
        attribute = getattr(driver.CUfunction_attribute, name)
        return int(
            _driver.check(
                driver.cuKernelGetAttribute(attribute, self._handle, self.device),
                f"cuKernelGetAttribute({name})",
            )
        )

    @property
    def attributes(self) -> KernelAttributes:
        """Return registers, shared/const/local memory and limits of this kernel."""
        return KernelAttributes(
            registers=self._attribute("CU_FUNC_ATTRIBUTE_NUM_REGS"),
            static_shared_mem=self._attribute("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"),
            max_dynamic_shared_mem=self._max_dynamic_shared(),
            const_mem=self._attribute("CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES"),
            local_mem=self._attribute("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"),
            max_threads_per_block=self._max_threads(),
            ptx_version=self._attribute("CU_FUNC_ATTRIBUTE_PTX_VERSION"),
            binary_version=self._attribute("CU_FUNC_ATTRIBUTE_BINARY_VERSION"),
        )

    def _max_dynamic_shared(self) -> int:
        if self._max_dynamic is None:
            self._max_dynamic = self._attribute("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES")
        return self._max_dynamic

    def set_max_dynamic_shared_mem(self, nbytes: int) -> None:
        """Let launches request up to nbytes of dynamic shared memory (opting in past 48 KiB).

        Raises ValueError when static plus dynamic shared memory exceeds the device's
        per-block opt-in limit.
        """
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"nbytes must be a non-negative int, got {nbytes!r}")
        info = _driver.device_info(self.device)
        static = self._attribute("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES")
        limit = info.max_shared_per_block_optin - static
        if nbytes > limit:
            raise ValueError(
                f"kernel {self.name!r} asks for {nbytes} bytes of dynamic shared memory; "
                f"cuda:{self.device} ({info.name}) allows {info.max_shared_per_block_optin} "
                f"bytes per block, {static} of which the kernel declares statically, so at "
                f"most {limit}"
            )
        driver = _driver.bindings()
        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        _driver.check(
            driver.cuKernelSetAttribute(attribute, nbytes, self._handle, self.device),
            "cuKernelSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
        )
        self._max_dynamic = nbytes
        with self._lock:
            self._plans.clear()  # their shared-memory checks assumed the old limit
            self._latest.clear()

    @staticmethod
    def _check_shared_mem(shared_mem: Any) -> None:
        if isinstance(shared_mem, bool) or not isinstance(shared_mem, int) or shared_mem < 0:
            raise ValueError(f"shared_mem must be a non-negative int, got {shared_mem!r}")

    def _allow_shared_mem(self, shared_mem: int) -> None:
        """Opt in to shared_mem (checked) bytes of dynamic shared memory where the kernel's
        limit is lower (as launches and occupancy queries need: the driver refuses the one
        and counts no block for the other)."""
        if shared_mem > self._max_dynamic_shared():
            self.set_max_dynamic_shared_mem(shared_mem)

    def max_active_blocks_per_sm(self, block: int | Sequence[int], shared_mem: int = 0) -> int:
        """Return how many blocks of this size fit on one multiprocessor at once.

        Past the kernel's current dynamic shared-memory limit this opts in first, as a
        launch would (set_max_dynamic_shared_mem; ValueError beyond the device's limit):
        the driver counts no block at all that asks for more than the limit it was given.
        """
        threads = math.prod(_dims(block, "block"))
        self._check_shared_mem(shared_mem)
        self._allow_shared_mem(shared_mem)
        driver = _driver.bindings()
        with _driver.using_device(self.device):
            return int(
                _driver.check(
                    driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        self._function, threads, shared_mem
                    ),
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                )
            )

    def occupancy(self, block: int | Sequence[int], shared_mem: int = 0) -> float:
        """Return the fraction of a multiprocessor's thread slots this launch shape fills."""
        threads = math.prod(_dims(block, "block"))
        blocks = self.max_active_blocks_per_sm(block, shared_mem)
        return blocks * threads / _driver.device_info(self.device).max_threads_per_sm

    def _max_threads(self) -> int:
        if self._max_threads_per_block is None:
            self._max_threads_per_block = self._attribute("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")
        return self._max_threads_per_block

    def _config(self, grid: Any, block: Any, shared_mem: Any, pdl: bool, cooperative: bool) -> Any:
        """Return the LaunchConfig of a launch shape; raise if the device or kernel refuse it."""
        LaunchConfig = cuda_core().LaunchConfig  # noqa: N806 (cuda.core's class)

        grid3 = _dims(grid, "grid")
        block3 = _dims(block, "block")
        self._check_shared_mem(shared_mem)
        info = _driver.device_info(self.device)
        where = f"cuda:{self.device}"
        for axis, size, limit in zip("xyz", grid3, info.max_grid_dims, strict=True):
            if size > limit:
                raise ValueError(
                    f"grid={grid!r} asks for {size} blocks in dimension {axis}; {where} allows "
                    f"at most {limit} blocks in {axis}"
                )
        for axis, size, limit in zip("xyz", block3, info.max_block_dims, strict=True):
            if size > limit:
                raise ValueError(
                    f"block={block!r} asks for {size} threads in dimension {axis}; {where} "
                    f"allows at most {limit} threads per block in {axis}"
                )
        threads = math.prod(block3)
        if threads > info.max_threads_per_block:
            raise ValueError(
                f"block={block!r} asks for {threads} threads per block; {where} allows at "
                f"most {info.max_threads_per_block} threads per block"
            )
        kernel_limit = self._max_threads()
        if threads > kernel_limit:
            raise ValueError(
                f"block={block!r} asks for {threads} threads per block; kernel {self.name!r} "
                f"can launch at most {kernel_limit} threads per block on {where} (its register "
                f"use keeps it below the device's {info.max_threads_per_block})"
            )
        self._allow_shared_mem(shared_mem)
        if not isinstance(pdl, bool):
            raise TypeError(f"pdl must be a bool, got {pdl!r}")
        if not isinstance(cooperative, bool):
            raise TypeError(f"cooperative must be a bool, got {cooperative!r}")
        if cooperative:
            self._check_co_resident(grid, block, math.prod(grid3), shared_mem, info.sm_count)
        # Programmatic dependent launch exists from sm_90 on; elsewhere the launch is ordered
        # by the stream as usual, which is what the kernel's no-op controls expect.
        overlap = pdl and info.compute_capability >= (9, 0)
        return LaunchConfig(
            grid=grid3,
            block=block3,
            shmem_size=shared_mem,
            programmatic_stream_serialization=overlap,
            is_cooperative=cooperative,
        )

    def _check_co_resident(
        self, grid: Any, block: Any, blocks: int, shared_mem: int, sm_count: int
    ) -> None:
        """Raise ValueError unless every block of the grid fits on the device at once."""
        per_sm = self.max_active_blocks_per_sm(block, shared_mem)
        if blocks > per_sm * sm_count:
            raise ValueError(
                f"cooperative launch of grid={grid!r} ({blocks} blocks): kernel {self.name!r} "
                f"fits {per_sm} blocks of block={block!r} with {shared_mem} bytes of dynamic "
                f"shared memory on each of the {sm_count} SMs of cuda:{self.device}, so "
                f"at most {per_sm * sm_count} blocks can be resident at once"
            )

    def _plan(self, shape: LaunchShape, args: Sequence[Any]) -> Launcher:
        """Check a launch whose shape and argument types have no plan yet; return its plan.

        Every check that depends only on the shape and the types (count, kinds and sizes of
        the arguments, grid and block limits, the shared-memory opt-in) runs here, once;
        the plan is the launch function _launcher writes for them.
        """
        if type(args) is not tuple and type(args) is not list:
            self._packer.pack(args)  # raises: the launch path may have consumed an iterator
        grid, block, *flags = shape
        key: Any = (_hashable(grid), _hashable(block), *flags, *map(type, args))
        try:
            plan = self._plans.get(key)  # the same launch with lists for grid or block
        except TypeError:  # not a shape; _config says why
            plan, key = None, None
        if plan is None:
            plan = self._write_plan(shape, args)
            if key is None:
                return plan
        with self._lock:
            if len(self._plans) >= _MAX_CACHED_PLANS:
                self._plans.clear()
                self._latest.clear()
            self._plans[key] = plan
            with contextlib.suppress(TypeError):  # lists for grid or block: not a key here
                self._latest[shape] = plan
        return plan

    def _write_plan(self, shape: LaunchShape, args: Sequence[Any]) -> Launcher:
        _, framework = self._packer.pack(args)
        torch_getters = None
        if framework == "torch":
            torch_getters = (_launch.torch_stream_getter(), _launch.torch_device_getter())
        return write_launcher(
            tuple(map(type, args)),
            self._packer.steps(args),
            device=self.device,
            framework=framework,
            torch_getters=torch_getters,
            config=self._config(*shape),
            core_kernel=self._core,
            core_launch=self._core_launch,
            streams_get=_streams.get,
            stream_entry=_launch.stream_entry,
            general=self._launch_general,
            failed=self._launch_failed,
        )

    def launch(
        self,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
        stream: Any = None,
        pdl: bool = False,
        cooperative: bool = False,
    ) -> None:
        """Launch this kernel; see spio.jit.launch for the arguments and errors."""
        # The launch path, kept short: the plan of the latest launch of this shape, which
        # checks the argument types itself and asks for another plan when they differ.
        # What depends on the values is checked on every call: each array's device, int
        # ranges, the stream and the current context. Equal keys mean identical launches,
        # so grid=1.0 after grid=1 is let through.
        shape = (grid, block, shared_mem, pdl, cooperative)
        try:
            plan = self._latest[shape]
        except (KeyError, TypeError):
            plan = self._plan(shape, args)
        try:
            try:
                plan(args, stream)
            except Replan:
                self._plan(shape, args)(args, stream)
        except ArgError:
            self._packer.pack(args)  # raises the error that names the argument and the fix
            raise

    def _launch_general(
        self, stream: Any, framework: str | None, config: Any, values: list[Any]
    ) -> None:
        """Launch on any stream (see _launch's module doc); plans inline torch's current one."""
        core_stream, contextless, in_context = self._stream(stream, framework)
        if not in_context:
            self._launch_in_context(core_stream, config, values)
            return
        try:
            self._core_launch(core_stream, config, self._core, *values)
        except Exception as error:
            self._launch_failed(error, core_stream, contextless, config, values)

    def _launch_failed(
        self, error: Exception, core_stream: Any, contextless: bool, config: Any, values: list[Any]
    ) -> None:
        """Handle a refused launch: retry it in this kernel's context, or raise CudaError."""
        if contextless and not self._driver_context_is_current():
            # A default stream, with no context current (a thread torch has not run in), so
            # the driver refused the launch: make the context current and retry.
            self._launch_in_context(core_stream, config, values)
            return
        if _driver.is_core_error(error):
            raise _driver.from_core_error(error, f"launch of kernel {self.name!r}") from error
        raise error

    def _stream(self, stream: Any, framework: str | None) -> tuple[Any, bool, bool]:
        """Return (cuda.core Stream, is a default stream, would run in this kernel's context).

        Handles every stream argument (see _launch's module doc); the plans inline the
        common one, torch's current stream.
        """
        device = self.device
        source = None
        if stream is None:
            source = _launch.default_stream_source(framework)
            handle = _launch.default_stream_handle(source, device)
        else:
            handle = stream if type(stream) is int else _launch.stream_handle(stream)
        core_stream, contextless, stream_device = _launch.stream_entry(handle)
        if stream_device is not None and stream_device != device:
            raise ValueError(
                f"the stream (handle {handle:#x}) belongs to cuda:{stream_device}, but the "
                f"kernel was loaded for cuda:{device}"
            )
        if not contextless:
            return core_stream, False, True
        if source == "torch":
            return core_stream, True, _launch.torch_device_getter()() == device
        return core_stream, True, self._driver_context_is_current()

    def _driver_context_is_current(self) -> bool:
        current = self._get_current_context()[1]
        return current is not None and int(current) == self._context

    def _launch_in_context(self, core_stream: Any, config: Any, values: list[Any]) -> None:
        try:
            with _driver.using_device(self.device):
                self._core_launch(core_stream, config, self._core, *values)
        except Exception as error:
            if _driver.is_core_error(error):
                raise _driver.from_core_error(error, f"launch of kernel {self.name!r}") from error
            raise


# Stream wrappers by handle; the plans read it directly on their common path.
_streams = _launch._streams


def _hashable(dims: Any) -> Any:
    """Return grid or block as a dict key: lists become tuples."""
    return tuple(dims) if type(dims) is list else dims


class Module:
    """A compiled program loaded for one device; hands out its kernels.

    The code is loaded with the context-independent library API (through cuda.core) and
    each kernel is made resident in the device's primary context, the one PyTorch uses.
    """

    def __init__(self, code: CompiledCode, device: int) -> None:
        ObjectCode = cuda_core().ObjectCode  # noqa: N806 (cuda.core's class)

        self.code = code
        self.device = device
        self._kernels: dict[str, Kernel] = {}
        self._lock = threading.Lock()
        try:
            # No symbol_mapping: _core_kernel maps name expressions itself. cuda.core hands a
            # mapped name to the driver as is, so 1.2.0 needs bytes there (its Program stores
            # lowered names as bytes) while a name it did not map is encoded from str by
            # every release; a mangled str name therefore works on all of them.
            self._object = ObjectCode.from_cubin(code.cubin, name=code.name)
        except Exception as error:
            if _driver.is_core_error(error):
                raise _driver.from_core_error(error, f"loading {code.name!r}") from error
            raise

    def __repr__(self) -> str:
        return f"<spio.jit.Module {self.code.name!r} ({self.code.arch}) on cuda:{self.device}>"

    def get_kernel(self, name: str) -> Kernel:
        """Return the kernel named by an extern "C" name, a name expression or a mangled name.

        Raises LookupError when the module has no such kernel.
        """
        kernel = self._kernels.get(name)
        if kernel is not None:
            return kernel
        with self._lock:
            kernel = self._kernels.get(name)
            if kernel is None:
                kernel = Kernel(self, name, self._core_kernel(name))
                self._kernels[name] = kernel
        return kernel

    def _core_kernel(self, name: str) -> Any:
        if not isinstance(name, str) or not name:
            raise TypeError(f"kernel name must be a non-empty str, got {name!r}")
        symbol = self.code.lowered_names.get(name, name)
        try:
            with _driver.using_device(self.device):
                return self._object.get_kernel(symbol)
        except Exception as error:
            if not _driver.is_core_error(error):
                raise
            converted = _driver.from_core_error(error, f"get_kernel({name!r})")
            if converted.name == "CUDA_ERROR_NOT_FOUND":
                expressions = ", ".join(repr(e) for e in self.code.lowered_names) or "none"
                raise LookupError(
                    f"{self.code.name!r} has no kernel {name!r}. Kernels are found by their "
                    'extern "C" name, by a name expression given to compile() (here: '
                    f"{expressions}), or by their mangled name"
                ) from None
            raise converted from error


def load(code: CompiledCode | bytes, *, device: int | None = None) -> Module:
    """Load a cubin into the primary context of a device.

    Args:
        code: the result of compile(), or cubin bytes built elsewhere.
        device: the device index (as in cuda:<index>); None means the current device
            (PyTorch's when torch has initialized CUDA, else the current context's, else 0).

    Raises:
        ValueError: the code is PTX, or its architecture cannot run on the device.
        CudaError: the driver refused the cubin.
    """
    if isinstance(code, bytes | bytearray | memoryview):
        code = CompiledCode.from_cubin(bytes(code))
    if not isinstance(code, CompiledCode):
        raise TypeError(f"load() takes a CompiledCode or cubin bytes, got {type(code).__name__}")
    if code.target != "cubin":
        raise ValueError(
            f"{code.name!r} is PTX, which spio-jit does not load (PTX from an NVRTC newer than "
            "the driver is refused); compile with target='cubin'"
        )
    index = _driver.current_device() if device is None else _driver.check_device_index(device)
    _check_arch_fits(code.arch, index)
    return Module(code, index)
