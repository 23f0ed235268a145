"""compile(): CUDA C++ source to a cubin (or PTX), through the disk cache.

The cache key is the sha256 of everything that can change the output: the source, the
in-memory headers, the files under include_dirs (path, size, modification and change
times; see _includes) and those the in-memory headers find on disk beside them (see
_cwd_includes), the defines, name expressions, options, target architecture and kind, the
program name, the NVRTC version and build, and the CUDA headers' version. The program's own
quoted includes are not looked for in the current directory (see _nvrtc.compile_program).

An include_dirs entry too large to fingerprint (see _includes.MAX_FILES) makes its compiles
bypass the cache, with a warning naming it once: a key that missed some of its files could
serve a stale cubin.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from spio.jit import _cache, _cwd_includes, _headers, _includes, _inputs, _nvrtc
from spio.jit._errors import CompileError
from spio.jit._inputs import DefineValue
from spio.jit._options import CompileOptions, check_arch
from spio.jit._workers import compiled_by_worker

if TYPE_CHECKING:
    from spio.jit._module import Module

Target = Literal["cubin", "ptx"]
_TARGETS = ("cubin", "ptx")
# 3: the current directory is no longer searched, so entries made in one with a stray header
# are not served.
_KEY_VERSION = b"spio-jit-key-3"
# NVRTC says "cannot open" for "quoted" includes and "could not open" for <angled> ones.
_MISSING_INCLUDE = re.compile(r'(?:cannot|could not) open source file "([^"]+)"')


@dataclass(frozen=True)
class CompiledCode:
    """The result of compile(): code for one architecture, and what NVRTC said.

    Attributes:
        code: the cubin bytes (target "cubin") or the PTX text as bytes (target "ptx").
        target: "cubin" or "ptx".
        arch: the architecture compiled for, e.g. "sm_90".
        lowered_names: each name expression mapped to its mangled kernel name.
        log: NVRTC's log (warnings; empty when there were none).
        name: the program name used in diagnostics.
        nvrtc_version: the (major, minor) of the NVRTC that compiled it.
        key: the cache key.
        from_cache: True when the result was read from the disk cache.
    """

    code: bytes = field(repr=False)
    target: Target
    arch: str
    lowered_names: Mapping[str, str]
    log: str = field(repr=False)
    name: str
    nvrtc_version: tuple[int, int]
    key: str = field(repr=False)
    from_cache: bool = field(default=False, compare=False)

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def cubin(self) -> bytes:
        """Return the cubin; raise ValueError when this is PTX."""
        if self.target != "cubin":
            raise ValueError(f"{self.name!r} was compiled to {self.target}, not a cubin")
        return self.code

    @property
    def ptx(self) -> str:
        """Return the PTX text; raise ValueError when this is a cubin (compile target='ptx')."""
        if self.target != "ptx":
            raise ValueError(
                f"{self.name!r} was compiled to a cubin; compile with target='ptx' for PTX"
            )
        return self.code.decode()

    def load(self, device: int | None = None) -> Module:
        """Load this cubin into a device's primary context; see spio.jit.load."""
        from spio.jit._module import load

        return load(self, device=device)

    @classmethod
    def from_cubin(
        cls,
        cubin: bytes,
        *,
        arch: str = "",
        name: str = "module",
        lowered_names: Mapping[str, str] | None = None,
    ) -> CompiledCode:
        """Wrap a cubin built elsewhere so it can be loaded (arch "" skips the arch check)."""
        digest = hashlib.sha256(cubin).hexdigest()
        return cls(bytes(cubin), "cubin", arch, dict(lowered_names or {}), "", name, (0, 0), digest)


@dataclass(frozen=True)
class CompileRequest:
    """The arguments of one compile() call, for compile_many; see compile() for each field."""

    source: str
    headers: Mapping[str, str] | None = None
    include_dirs: Sequence[str | os.PathLike[str]] = ()
    defines: Mapping[str, DefineValue] | None = None
    arch: str | None = None
    name_expressions: Sequence[str] = ()
    options: CompileOptions = field(default_factory=CompileOptions)
    target: Target = "cubin"
    name: str = "kernel.cu"


@dataclass(frozen=True)
class _Prepared:
    """A validated, normalized request with its NVRTC options and cache key.

    cacheable is False when an include_dirs entry was too large to fingerprint.
    """

    source: str
    headers: tuple[tuple[str, str], ...]
    arch: str
    name_expressions: tuple[str, ...]
    target: Target
    name: str
    flags: tuple[str, ...]
    key: str
    cuda_headers: _headers.CudaHeaders
    cacheable: bool = True


def _include_dirs(include_dirs: object) -> list[tuple[str, bytes | None]]:
    """Return (absolute path, fingerprint of its files or None) of each include_dirs entry."""
    found = []
    for entry in _inputs.include_dirs(include_dirs):
        directory = _includes.directory(entry)
        try:
            found.append((directory, _includes.fingerprint(directory)))
        except NotADirectoryError:
            raise ValueError(
                f"include_dirs entry {os.fspath(entry)!r} is not a directory"
            ) from None
    return found


def _warn_uncacheable(directory: str) -> None:
    _cache.warn_once(
        ("include_dirs too large", directory),
        f"spio-jit does not cache compiles with include_dirs entry {directory}: it holds more "
        f"than {_includes.MAX_FILES} files, too many to check for edits on every compile. "
        "Pass the directory that holds just the headers to have such compiles cached.",
    )


def _feed(digest: Any, *parts: str | bytes) -> None:
    for part in parts:
        # Paths may hold undecodable bytes (surrogate escapes); every other text was checked.
        data = part.encode(errors="surrogateescape") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)


def prepare(
    source: str | bytes,
    *,
    headers: Mapping[str, str | bytes] | None,
    include_dirs: Sequence[str | os.PathLike[str]],
    defines: Mapping[str, DefineValue] | None,
    arch: str | None,
    name_expressions: Sequence[str],
    options: CompileOptions,
    target: str,
    name: str,
) -> _Prepared:
    """Validate and normalize compile()'s arguments and compute the cache key."""
    text = _inputs.source(source)
    if not isinstance(options, CompileOptions):
        raise TypeError(f"options must be a CompileOptions, got {type(options).__name__}")
    if target not in _TARGETS:
        raise ValueError(f"target={target!r} must be 'cubin' or 'ptx'")
    name = _inputs.program_name(name)
    expressions = _inputs.name_expressions(name_expressions)
    header_items = _inputs.headers(headers)
    define_flags = _inputs.define_flags(defines)
    includes = _include_dirs(include_dirs)

    info = _nvrtc.info()
    if arch is None:
        from spio.jit import _driver

        arch = _driver.default_arch()
    arch = check_arch(arch, info.supported_archs, info.version_string)
    cuda = _headers.cuda_headers()
    flags = (
        f"--gpu-architecture={arch}",
        *options.nvrtc_flags(),
        *define_flags,
        *(f"-I{directory}" for directory, _ in includes),
        *(f"-I{d}" for d in cuda.include_dirs),
    )

    digest = hashlib.sha256(_KEY_VERSION)
    _feed(digest, info.version_string, info.build, cuda.fingerprint, target, name, arch, text)
    _feed(digest, *options.nvrtc_flags(), "\0", *define_flags, "\0", *expressions, "\0")
    for include, content in header_items:
        _feed(digest, include, content)
    cacheable = True
    for directory, fingerprint in includes:
        if fingerprint is None:
            _warn_uncacheable(directory)
            cacheable = False
        _feed(digest, directory, fingerprint or b"too large")
    for path, found in _cwd_includes.found(header_items):
        _feed(digest, "\0", path, f"{found.st_size} {found.st_mtime_ns} {found.st_ctime_ns}")
    return _Prepared(
        source=text,
        headers=header_items,
        arch=arch,
        name_expressions=expressions,
        target=cast(Target, target),
        name=name,
        flags=flags,
        key=digest.hexdigest(),
        cuda_headers=cuda,
        cacheable=cacheable,
    )


def _from_entry(prepared: _Prepared, entry: _cache.CacheEntry) -> CompiledCode | None:
    meta = entry.meta
    try:
        return CompiledCode(
            code=entry.code,
            target=prepared.target,
            arch=prepared.arch,
            lowered_names={str(k): str(v) for k, v in meta["lowered_names"]},
            log=str(meta["log"]),
            name=prepared.name,
            nvrtc_version=(int(meta["nvrtc_version"][0]), int(meta["nvrtc_version"][1])),
            key=prepared.key,
            from_cache=True,
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def lookup(prepared: _Prepared, cache: _cache.DiskCache | None) -> CompiledCode | None:
    """Return the cached result of a prepared compile, or None on a miss."""
    if cache is None or not prepared.cacheable:
        return None
    entry = cache.get(prepared.key)
    return None if entry is None else _from_entry(prepared, entry)


def _missing_header_hint(missing: list[str], prepared: _Prepared) -> str:
    names = ", ".join(repr(m) for m in missing)
    cuda = prepared.cuda_headers
    if any(m.startswith("cuda") for m in missing):
        if not cuda.found:
            return _headers.MISSING_HEADERS_HINT
        problem = _headers.override_problem(cuda)
        if problem is not None:
            return f"{names} was not found: {problem}"
    in_cwd = [m for m in missing if os.path.isfile(m)]
    if in_cwd:
        return (
            f"{', '.join(repr(m) for m in in_cwd)} is in the current directory, which spio-jit "
            "does not search (the cache cannot tell where a process runs): pass its directory "
            "in include_dirs=[...] or its contents in headers={name: text}"
        )
    return (
        f"{names} was not found: pass its contents in headers={{name: text}} or its "
        "directory in include_dirs=[...]"
    )


def _hint(failure: _nvrtc.NvrtcCallError, prepared: _Prepared) -> str:
    missing = _MISSING_INCLUDE.findall(failure.log)
    if missing:
        return _missing_header_hint(missing, prepared)
    if failure.call.startswith("name expression"):
        return (
            f"{failure.call} is not valid: it must name a __global__ function (template "
            "instantiations need their arguments, e.g. 'scale<float, 4>')"
        )
    if failure.result == "NVRTC_ERROR_INVALID_OPTION":
        return "NVRTC rejected an option; check CompileOptions.extra_flags and defines"
    return ""


def run_compile(prepared: _Prepared, cache: _cache.DiskCache | None) -> CompiledCode:
    """Compile a prepared request, using and filling the cache when one is given."""
    if not prepared.cacheable:
        cache = None
    hit = lookup(prepared, cache)
    if hit is not None:
        return hit
    if cache is None:
        return _compile_here_or_in_worker(prepared)
    with cache.lock(prepared.key):
        # Another process may have compiled this key while this one waited for the lock.
        hit = lookup(prepared, cache)
        if hit is not None:
            return hit
        result = _compile_here_or_in_worker(prepared)
        cache.put(
            prepared.key,
            _cache.CacheEntry(
                meta={
                    # Pairs, not an object: the entry's JSON is key-sorted, and the order of
                    # the name expressions is kept.
                    "lowered_names": [list(pair) for pair in result.lowered_names.items()],
                    "log": result.log,
                    "nvrtc_version": list(result.nvrtc_version),
                    "arch": result.arch,
                    "target": result.target,
                    "name": result.name,
                },
                code=result.code,
            ),
        )
        return result


def _compile_here_or_in_worker(prepared: _Prepared) -> CompiledCode:
    """NVRTC's compile of prepared: in a worker process inside compile_in_workers (_workers),
    else in the calling thread."""
    compiled = compiled_by_worker(prepared)
    return _compile_now(prepared) if compiled is None else compiled


def _compile_now(prepared: _Prepared) -> CompiledCode:
    try:
        output = _nvrtc.compile_program(
            prepared.source,
            prepared.name,
            prepared.headers,
            prepared.flags,
            prepared.name_expressions,
            prepared.target,
        )
    except _nvrtc.NvrtcCallError as failure:
        hint = _hint(failure, prepared)
        raise _compile_error(prepared, failure.log, failure.result, hint) from None
    if not output.code:
        # NVRTC succeeds with no cubin when an option asks for other output (LTO IR).
        raise _compile_error(
            prepared,
            output.log,
            f"no {prepared.target}",
            f"NVRTC made no {prepared.target}; an option in CompileOptions.extra_flags may ask "
            "for another kind of output",
        )
    return CompiledCode(
        code=output.code,
        target=prepared.target,
        arch=prepared.arch,
        lowered_names=output.lowered_names,
        log=output.log,
        name=prepared.name,
        nvrtc_version=_nvrtc.version(),
        key=prepared.key,
        from_cache=False,
    )


def _compile_error(prepared: _Prepared, log: str, result: str, hint: str) -> CompileError:
    return CompileError(
        name=prepared.name,
        arch=prepared.arch,
        log=log,
        options=prepared.flags,
        result=result,
        source=prepared.source,
        headers=dict(prepared.headers),
        hint=hint,
    )


def compile(
    source: str | bytes,
    *,
    headers: Mapping[str, str | bytes] | None = None,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, DefineValue] | None = None,
    arch: str | None = None,
    name_expressions: Sequence[str] = (),
    options: CompileOptions = CompileOptions(),  # noqa: B008  (frozen, so sharing is safe)
    target: Target = "cubin",
    name: str = "kernel.cu",
    cache: bool = True,
) -> CompiledCode:
    """Compile CUDA C++ source with NVRTC into a cubin for one architecture.

    Args:
        source: the CUDA C++ program.
        headers: include names mapped to contents, found by `#include "name"` before any
            directory (e.g. {"types.h": generated_text}).
        include_dirs: directories searched for other includes (the current directory is
            not, as the cache could not tell where a process runs). CUDA's own headers
            (cuda_fp16.h, cuda_bf16.h, cuda_pipeline.h, ...) are found automatically.
        defines: preprocessor macros: {"BLOCK": 128, "USE_BF16": None} gives -DBLOCK=128
            -DUSE_BF16; True/False give 1/0.
        arch: the target, e.g. "sm_80", "sm_90a"; None means the current GPU's (and is an
            error on a machine without one).
        name_expressions: kernels to look up by their C++ names, e.g. "scale<float, 4>";
            their mangled names land in CompiledCode.lowered_names, and Module.get_kernel
            accepts the expressions.
        options: C++ standard, line info, debug, register cap, extra NVRTC flags.
        target: "cubin" (loadable) or "ptx" (for inspection; not loadable).
        name: the program name, one line, that diagnostics and __FILE__ give.
        cache: False skips the disk cache for this call (SPIO_JIT_DISABLE_CACHE does for
            all); a bool, so that a word like "no" is not taken as True.

    Returns:
        The compiled code, with NVRTC's log and the lowered names.

    Raises:
        CompileError: NVRTC rejected the program or an option; carries the full log.
        NvrtcNotFoundError: no NVRTC library could be loaded.
        ValueError, TypeError: invalid arguments (unknown arch, bad define name, ...).
    """
    disk = chosen_cache(cache)
    prepared = prepare(
        source,
        headers=headers,
        include_dirs=include_dirs,
        defines=defines,
        arch=arch,
        name_expressions=name_expressions,
        options=options,
        target=target,
        name=name,
    )
    return run_compile(prepared, disk)


def prepare_request(request: CompileRequest) -> _Prepared:
    """Validate a CompileRequest's fields and key it, as compile() does before NVRTC runs."""
    return prepare(
        request.source,
        headers=request.headers,
        include_dirs=request.include_dirs,
        defines=request.defines,
        arch=request.arch,
        name_expressions=request.name_expressions,
        options=request.options,
        target=request.target,
        name=request.name,
    )


def compile_request(request: CompileRequest, *, cache: bool = True) -> CompiledCode:
    """Run compile() with the fields of a CompileRequest."""
    disk = chosen_cache(cache)
    return run_compile(prepare_request(request), disk)


def chosen_cache(cache: bool) -> _cache.DiskCache | None:
    """The disk cache a compile uses: the environment's, unless cache is False (TypeError
    for anything but a bool)."""
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, got {cache!r}")
    return _cache.default_cache() if cache else None
