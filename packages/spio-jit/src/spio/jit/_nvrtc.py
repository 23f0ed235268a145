"""NVRTC through cuda.bindings: loading it, reporting which library was loaded, compiling.

cuda.bindings.nvrtc loads libnvrtc itself on the first call (cuda-bindings >= 12.9 asks
cuda.pathfinder, which looks in NVIDIA's pip wheels, conda, CUDA_HOME/CUDA_PATH and the
system search path, in that order). cuda.pathfinder looks for CUDA 13's NVRTC before CUDA
12's whatever the bindings' major, so where both wheels are installed (another package's
CUDA 13 wheels, such as cupy-cuda13x[ctk], beside spio-jit[cu12]) cuda-bindings 12 would call
NVRTC 13. spio-jit therefore first loads the NVRTC wheel of the bindings' major, when nothing
has loaded an NVRTC yet: cuda.pathfinder takes a library already loaded in the process
without searching. Otherwise spio-jit does not choose the library; it asks the loaded process
which file the NVRTC functions live in (dladdr, then /proc/self/maps, then cuda.pathfinder's
record), so the report names the library in use, and a major other than the bindings' is
reported (a warning, and a line of `spio-jit doctor`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.metadata
import os
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spio.jit import _env, _nvidia_wheels
from spio.jit._errors import NvrtcNotFoundError

_lock = threading.Lock()

# NVRTC looks for a quoted #include first beside the file that includes it: for the program,
# beside its name, which for a bare name such as "kernel.cu" is the process's current
# directory. A header there would shadow include_dirs, and no cache key can see where a
# process runs. So NVRTC is given a name below a regular file (a directory that cannot exist,
# on any platform), and a #line directive gives the caller's name back to diagnostics and
# __FILE__.
_PROGRAM = os.path.join(os.path.abspath(__file__), "program.cu")


@dataclass(frozen=True)
class NvrtcInfo:
    """Which NVRTC this process compiles with.

    Attributes:
        version: NVRTC's (major, minor), e.g. (13, 0).
        library: absolute path of the loaded libnvrtc, or None if it could not be determined.
        origin: where that library comes from, in words (pip wheel, CUDA_HOME, system).
        build: the exact build where known (the wheel's version, else the file's size and
            modification time); part of the cache key so a patch release recompiles.
        bindings_version: the cuda-bindings version that loaded it.
        supported_archs: the SM versions this NVRTC can compile for, e.g. (75, 80, ..., 120).
    """

    version: tuple[int, int]
    library: str | None
    origin: str
    build: str
    bindings_version: str
    supported_archs: tuple[int, ...]

    @property
    def version_string(self) -> str:
        """Return the version as "major.minor"."""
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def bindings_mismatch(self) -> str | None:
        """Say why NVRTC's major differs from cuda-bindings' and what to install, or None."""
        return major_mismatch(self.version, self.bindings_version)


def _install_hint(bindings_major: int | None) -> str:
    lines = [
        "Install NVRTC from NVIDIA's pip wheels, matching the cuda-bindings major version:",
        "  CUDA 13: pip install 'spio-jit[cu13]'   (cuda-bindings 13, nvidia-cuda-nvrtc)",
        "  CUDA 12: pip install 'spio-jit[cu12]'   (cuda-bindings 12, nvidia-cuda-nvrtc-cu12)",
        "or point CUDA_HOME at a CUDA toolkit that has libnvrtc.",
    ]
    if bindings_major is not None:
        lines.insert(1, f"  (cuda-bindings {bindings_major}.x is installed here)")
    return "\n".join(lines)


def _bindings_version() -> str:
    try:
        return importlib.metadata.version("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def bindings() -> Any:
    """Return cuda.bindings.nvrtc with NVRTC loaded, or raise NvrtcNotFoundError."""
    return _loaded()[0]


@functools.cache
def _loaded() -> tuple[Any, tuple[int, int]]:
    version = _bindings_version()
    major = int(version.split(".")[0]) if version[:1].isdigit() else None
    if major is not None:
        _load_wheel_of_major(major)
    try:
        from cuda.bindings import nvrtc
    except ImportError as error:
        raise NvrtcNotFoundError(
            f"cuda-bindings is not importable ({error}).\n{_install_hint(major)}"
        ) from error
    try:
        result, nv_major, nv_minor = nvrtc.nvrtcVersion()
    except Exception as error:
        raise NvrtcNotFoundError(
            f"cuda-bindings {version} could not load libnvrtc: {error}\n{_install_hint(major)}"
        ) from error
    if int(result) != 0:
        raise NvrtcNotFoundError(f"nvrtcVersion failed ({result!r}).\n{_install_hint(major)}")
    loaded = (int(nv_major), int(nv_minor))
    mismatch = major_mismatch(loaded, version)
    if mismatch is not None:
        warnings.warn(mismatch, RuntimeWarning, stacklevel=2)
    return nvrtc, loaded


def _load_wheel_of_major(major: int) -> None:
    """Load the NVRTC wheel of cuda-bindings' major, unless an NVRTC is loaded already.

    Loaded with RTLD_GLOBAL, as cuda.pathfinder loads it, and with the builtins library beside
    it first, which libnvrtc opens by name when it compiles. A library that does not load is
    left to the bindings' own search, whose error names what to install.
    """
    if _path_by_maps() is not None:
        return
    library = _nvidia_wheels.nvrtc_library(major)
    if library is None:
        return
    mode = os.RTLD_NOW | os.RTLD_GLOBAL
    try:
        for builtins in sorted(library.parent.glob(f"libnvrtc-builtins.so.{major}.*")):
            ctypes.CDLL(str(builtins), mode=mode)
        ctypes.CDLL(str(library), mode=mode)
    except OSError:
        return


def major_mismatch(loaded: tuple[int, int], bindings_version: str) -> str | None:
    """Say why an NVRTC of another major than cuda-bindings' is a problem, or return None."""
    bindings_major = bindings_version.split(".")[0]
    if not bindings_major.isdigit() or int(bindings_major) == loaded[0]:
        return None
    wanted = int(bindings_major)
    if _nvidia_wheels.nvrtc_library(wanted) is None:
        why = f"no NVRTC {wanted} wheel is installed"
    else:
        why = f"another library loaded NVRTC {loaded[0]} before spio-jit could load NVRTC {wanted}"
    return (
        f"cuda-bindings {bindings_version} is for CUDA {wanted}, but NVRTC "
        f"{loaded[0]}.{loaded[1]} was loaded ({why}); the bindings support only their own "
        f"major.\n{_install_hint(wanted)}"
    )


def version() -> tuple[int, int]:
    """Return the loaded NVRTC's (major, minor), loading it on first use."""
    return _loaded()[1]


@functools.cache
def info() -> NvrtcInfo:
    """Return which NVRTC is loaded, loading it on first use."""
    nvrtc, nv_version = _loaded()
    result, archs = nvrtc.nvrtcGetSupportedArchs()
    supported = tuple(int(a) for a in archs) if int(result) == 0 else ()
    library = _loaded_library_path()
    origin, build = _describe_library(library)
    return NvrtcInfo(
        version=nv_version,
        library=library,
        origin=origin,
        build=build,
        bindings_version=_bindings_version(),
        supported_archs=supported,
    )


class _DlInfo(ctypes.Structure):
    _fields_ = (
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    )


def _path_by_dladdr() -> str | None:
    """Return the file that holds the nvrtcVersion the bindings call, via dladdr."""
    try:
        from cuda.bindings._internal import nvrtc as internal

        address = int(internal._inspect_function_pointer("__nvrtcVersion"))
    except Exception:
        return None
    if not address:
        return None
    for name in (None, ctypes.util.find_library("dl")):
        try:
            dladdr = ctypes.CDLL(name).dladdr
        except (OSError, AttributeError):
            continue
        dladdr.argtypes = (ctypes.c_void_p, ctypes.POINTER(_DlInfo))
        dladdr.restype = ctypes.c_int
        found = _DlInfo()
        if dladdr(address, ctypes.byref(found)) and found.dli_fname:
            return os.path.realpath(found.dli_fname.decode())
    return None


def _path_by_maps() -> str | None:
    """Return the libnvrtc mapped into this process, from /proc/self/maps (Linux)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                name = os.path.basename(path)
                is_nvrtc = name.startswith(("libnvrtc.so", "libnvrtc-"))
                if is_nvrtc and "builtins" not in name:
                    return path
    except OSError:
        return None
    return None


def _path_by_pathfinder() -> str | None:
    """Return cuda.pathfinder's record of libnvrtc (cached, so the bindings' own load)."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        return load_nvidia_dynamic_lib("nvrtc").abs_path
    except Exception:
        return None


def _loaded_library_path() -> str | None:
    for finder in (_path_by_dladdr, _path_by_maps):
        path = finder()
        if path:
            return path
    if sys.platform == "win32":
        return _path_by_pathfinder()
    return None


def _wheel(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _describe_library(library: str | None) -> tuple[str, str]:
    """Return (origin in words, exact build) of a loaded libnvrtc path."""
    if library is None:
        return "unknown (the loaded library could not be located)", ""
    path = Path(library)
    parts = path.parts
    try:
        stat = path.stat()
        file_build = f"{stat.st_size}-{stat.st_mtime_ns}"
    except OSError:
        file_build = ""
    if "nvidia" in parts:
        below = parts[parts.index("nvidia") + 1 :]
        layout = below[0] if below else ""
        if layout.startswith("cu1"):
            wheel = "nvidia-cuda-nvrtc"
        elif layout == "cuda_nvrtc":
            wheel = "nvidia-cuda-nvrtc-cu12"
        else:
            wheel = None
        if wheel is not None:
            build = _wheel(wheel)
            return f"pip wheel {wheel} {build or ''}".rstrip(), build or file_build
    home = _env.cuda_home()
    if home is not None and path.is_relative_to(home.resolve()):
        return f"CUDA_HOME ({home})", file_build
    conda = _env.conda_prefix()
    if conda is not None and path.is_relative_to(conda.resolve()):
        return f"conda environment ({conda})", file_build
    return "system library search path", file_build


@dataclass(frozen=True)
class NvrtcOutput:
    """What one successful NVRTC compile produced."""

    code: bytes
    lowered_names: dict[str, str]
    log: str


class NvrtcCallError(Exception):
    """NVRTC refused a program; carries the result name, the failing call and the log."""

    def __init__(self, result: str, log: str, call: str) -> None:
        self.result = result
        self.log = log
        self.call = call
        super().__init__(f"{call}: {result}: {log}")


def _check(nvrtc: Any, returned: Any, call: str, prog: Any = None) -> Any:
    result = returned[0] if isinstance(returned, tuple) else returned
    if int(result) != 0:
        log = _program_log(nvrtc, prog) if prog is not None else ""
        name = getattr(result, "name", str(result))
        raise NvrtcCallError(name, log, call)
    if isinstance(returned, tuple) and len(returned) == 2:
        return returned[1]
    return returned[1:] if isinstance(returned, tuple) else None


def _program_log(nvrtc: Any, prog: Any) -> str:
    result, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if int(result) != 0 or size <= 1:
        return ""
    buffer = b" " * size
    (result,) = nvrtc.nvrtcGetProgramLog(prog, buffer)
    return buffer.rstrip(b"\0").decode("utf-8", errors="replace")


def compile_program(
    source: str,
    name: str,
    headers: tuple[tuple[str, str], ...],
    options: tuple[str, ...],
    name_expressions: tuple[str, ...],
    target: str,
) -> NvrtcOutput:
    """Compile one program with NVRTC; raise NvrtcCallError with the log on failure.

    name (one line, no NUL) is what diagnostics and __FILE__ say; quoted includes of the
    program are not looked for in the current directory (see _PROGRAM).
    """
    try:
        output = _compile_program(
            _with_name(source, name), headers, options, name_expressions, target
        )
    except NvrtcCallError as failure:
        raise NvrtcCallError(
            failure.result, failure.log.replace(_PROGRAM, name), failure.call
        ) from None
    return NvrtcOutput(output.code, output.lowered_names, output.log.replace(_PROGRAM, name))


def _with_name(source: str, name: str) -> str:
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{quoted}"\n{source}'


def _compile_program(
    source: str,
    headers: tuple[tuple[str, str], ...],
    options: tuple[str, ...],
    name_expressions: tuple[str, ...],
    target: str,
) -> NvrtcOutput:
    nvrtc = bindings()
    prog = _check(
        nvrtc,
        nvrtc.nvrtcCreateProgram(
            source.encode(),
            os.fsencode(_PROGRAM),
            len(headers),
            [content.encode() for _, content in headers],
            [include.encode() for include, _ in headers],
        ),
        "nvrtcCreateProgram",
    )
    try:
        for expression in name_expressions:
            _check(
                nvrtc,
                nvrtc.nvrtcAddNameExpression(prog, expression.encode()),
                f"name expression {expression!r}",
            )
        # As a command line's arguments: a path's undecodable bytes (surrogate escapes) go back.
        encoded = [os.fsencode(option) for option in options]
        _check(nvrtc, nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded), "compile", prog)
        log = _program_log(nvrtc, prog)
        lowered = {}
        for expression in name_expressions:
            mangled = _check(
                nvrtc,
                nvrtc.nvrtcGetLoweredName(prog, expression.encode()),
                f"name expression {expression!r}",
                prog,
            )
            lowered[expression] = mangled.decode() if isinstance(mangled, bytes) else mangled
        if target == "ptx":
            size = _check(nvrtc, nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize", prog)
            buffer = b" " * size
            _check(nvrtc, nvrtc.nvrtcGetPTX(prog, buffer), "nvrtcGetPTX", prog)
            code = buffer.rstrip(b"\0")
        else:
            size = _check(nvrtc, nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize", prog)
            buffer = b" " * size
            _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, buffer), "nvrtcGetCUBIN", prog)
            code = buffer
        return NvrtcOutput(code=code, lowered_names=lowered, log=log)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def install_bundled_headers(directory: Path) -> bool:
    """Extract NVRTC's bundled CUDA headers (NVRTC >= 13.3) into directory; True on success."""
    nvrtc = bindings()
    if version() < (13, 3) or not hasattr(nvrtc, "nvrtcInstallBundledHeaders"):
        return False
    flags = int(getattr(nvrtc, "NVRTC_INSTALL_HEADERS_SKIP_IF_EXISTS", 0))
    with _lock:
        try:
            returned = nvrtc.nvrtcInstallBundledHeaders(str(directory).encode(), flags)
        except Exception:
            return False
    result = returned[0] if isinstance(returned, tuple) else returned
    return int(result) == 0
