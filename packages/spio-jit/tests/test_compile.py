"""compile(): cubins and PTX for the architectures the kernels target, and its errors."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest
from jit_testkit import (
    ARCHS,
    SAXPY_SOURCE,
    TENSOR_CORE_EXPRESSIONS,
    TENSOR_CORE_SOURCE,
    TILE_HEADERS,
    cubin_sm,
)

import spio.jit as jit
from spio.jit._compile import compile_request


@pytest.mark.parametrize("arch", ARCHS)
def test_tensor_core_kernel_compiles_to_a_cubin_for_the_arch(arch: str) -> None:
    """fp16/bf16, inline-PTX mma/ldmatrix/cp.async, cuda_pipeline.h and templates compile."""
    code = jit.compile(
        TENSOR_CORE_SOURCE,
        headers=TILE_HEADERS,
        arch=arch,
        name_expressions=TENSOR_CORE_EXPRESSIONS,
    )
    assert code.target == "cubin"
    assert code.arch == arch
    assert cubin_sm(code.cubin) == int(arch[3:])
    assert set(code.lowered_names) == set(TENSOR_CORE_EXPRESSIONS)
    for expression, mangled in code.lowered_names.items():
        assert mangled.startswith("_Z8tile_mma"), (expression, mangled)
    assert code.nvrtc_version == jit.nvrtc_info().version


def test_ptx_target_gives_ptx_text_for_the_arch() -> None:
    code = jit.compile(SAXPY_SOURCE, arch="sm_90", target="ptx")
    assert code.target == "ptx"
    assert ".target sm_90" in code.ptx
    assert ".entry saxpy" in code.ptx
    with pytest.raises(ValueError, match="compiled to ptx, not a cubin"):
        _ = code.cubin


def test_cubin_has_no_ptx_text() -> None:
    code = jit.compile(SAXPY_SOURCE, arch="sm_80")
    with pytest.raises(ValueError, match="target='ptx'"):
        _ = code.ptx


def test_arch_specific_target_compiles() -> None:
    code = jit.compile(SAXPY_SOURCE, arch="sm_90a")
    assert code.arch == "sm_90a"
    assert cubin_sm(code.cubin) == 90


def test_in_memory_headers_including_each_other() -> None:
    source = (
        '#include "demo/tile.h"\nextern "C" __global__ void k(int* out) { *out = Tile::k * M; }\n'
    )
    code = jit.compile(source, headers=TILE_HEADERS, arch="sm_80")
    assert cubin_sm(code.cubin) == 80


def test_headers_accept_bytes() -> None:
    headers = {"value.h": b"#define VALUE 3\n"}
    source = '#include "value.h"\nextern "C" __global__ void k(int* out) { *out = VALUE; }\n'
    assert jit.compile(source, headers=headers, arch="sm_80").cubin


def test_include_dirs_are_searched(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "twice.h").write_text("__device__ int twice(int x) { return 2 * x; }\n")
    source = '#include "lib/twice.h"\nextern "C" __global__ void k(int* p) { *p = twice(*p); }\n'
    assert jit.compile(source, include_dirs=[tmp_path], arch="sm_80").cubin


def test_defines_reach_the_preprocessor() -> None:
    source = (
        "#if !defined(FLAG) || VALUE != 7 || ENABLED != 1\n#error defines missing\n#endif\n"
        'extern "C" __global__ void k(int* p) { *p = VALUE; }\n'
    )
    defines = {"FLAG": None, "VALUE": 7, "ENABLED": True}
    assert jit.compile(source, defines=defines, arch="sm_80").cubin


def test_options_become_nvrtc_flags() -> None:
    options = jit.CompileOptions(
        std="c++20", lineinfo=True, max_registers=64, extra_flags=["--use_fast_math"]
    )
    assert options.nvrtc_flags() == (
        "--std=c++20",
        "-lineinfo",
        "--maxrregcount=64",
        "--use_fast_math",
    )
    assert options.extra_flags == ("--use_fast_math",)  # stored as a tuple: hashable
    hash(options)
    assert jit.compile(SAXPY_SOURCE, arch="sm_86", options=options).cubin
    debug = jit.CompileOptions(debug=True)
    assert "-G" in debug.nvrtc_flags()
    assert jit.compile(SAXPY_SOURCE, arch="sm_86", options=debug).cubin


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"std": "c++98"}, ValueError, "std='c\\+\\+98'"),
        ({"max_registers": 0}, ValueError, "max_registers"),
        ({"max_registers": 300}, ValueError, "max_registers"),
        # Regression: a bool or a float was a ValueError, as if only its value were wrong.
        ({"max_registers": True}, TypeError, "max_registers must be None or an int .* got True"),
        ({"max_registers": 32.0}, TypeError, "max_registers must be None or an int .* got 32.0"),
        ({"lineinfo": 1}, TypeError, "lineinfo must be a bool"),
        ({"extra_flags": "--use_fast_math"}, TypeError, "sequence of str"),
        # Regression: None gave "'NoneType' object is not iterable".
        ({"extra_flags": None}, TypeError, "extra_flags must be a sequence of str, got None"),
        ({"extra_flags": {"-G", "-lineinfo"}}, TypeError, "extra_flags must be a sequence"),
        ({"extra_flags": ("-arch=sm_80",)}, ValueError, "use arch="),
        ({"extra_flags": ("--std=c++14",)}, ValueError, "CompileOptions.std"),
        # Regression: include paths in extra_flags were not part of the cache key, so an
        # edited header there was served stale.
        ({"extra_flags": ("-I/opt/include",)}, ValueError, "'-I/opt/include'; use include_dirs"),
        ({"extra_flags": ("-I", "/opt/include")}, ValueError, "'-I'; use include_dirs"),
        ({"extra_flags": ("--include-path=/x",)}, ValueError, "use include_dirs"),
        ({"extra_flags": ("-include", "x.h")}, ValueError, "use headers="),
        ({"extra_flags": ("--pre-include=x.h",)}, ValueError, "use headers="),
        # Regression: -dlto compiled to LTO IR, returned and cached as a 0-byte cubin.
        ({"extra_flags": ("-dlto",)}, ValueError, "'-dlto', which spio-jit cannot use: .*LTO"),
        ({"extra_flags": ("--dlink-time-opt",)}, ValueError, "LTO IR"),
        ({"extra_flags": ("--fdevice-syntax-only",)}, ValueError, "makes no kernels"),
    ],
)
def test_invalid_options_are_refused(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        jit.CompileOptions(**kwargs)


def test_syntax_error_shows_the_offending_line_with_context() -> None:
    source = 'extern "C" __global__ void k(float* y) {\n    int i = 0\n    y[i] = 1.0f;\n}\n'
    with pytest.raises(jit.CompileError) as caught:
        jit.compile(source, arch="sm_80", name="broken.cu")
    error = caught.value
    message = str(error)
    assert "NVRTC could not compile 'broken.cu' for sm_80 (1 error)" in message
    assert 'broken.cu(3): error: expected a ";"' in message
    assert re.search(r">\s+3 \|     y\[i\] = 1.0f;", message)
    assert re.search(r"\s2 \|     int i = 0", message)  # context line before
    assert "--gpu-architecture=sm_80" in message
    assert error.log.startswith("broken.cu(3): error")
    assert error.errors[0].line == 3
    assert error.options[0] == "--gpu-architecture=sm_80"
    assert error.result == "NVRTC_ERROR_COMPILATION"


def test_error_in_an_in_memory_header_shows_the_header_line() -> None:
    headers = {"bad.h": "struct A { int x }\n"}
    with pytest.raises(jit.CompileError) as caught:
        jit.compile('#include "bad.h"\n', headers=headers, arch="sm_80")
    assert re.search(r">\s+1 \| struct A \{ int x \}", str(caught.value))


def test_missing_header_names_it_and_says_how_to_provide_it() -> None:
    with pytest.raises(jit.CompileError) as caught:
        jit.compile('#include "generated/types.h"\n', arch="sm_80")
    message = str(caught.value)
    assert 'cannot open source file "generated/types.h"' in message
    assert "headers={name: text}" in message
    assert "include_dirs" in message


def test_bad_option_is_a_compile_error_with_nvrtc_log() -> None:
    options = jit.CompileOptions(extra_flags=("--no-such-flag",))
    with pytest.raises(jit.CompileError) as caught:
        jit.compile(SAXPY_SOURCE, arch="sm_80", options=options)
    assert caught.value.result == "NVRTC_ERROR_INVALID_OPTION"
    assert "--no-such-flag" in str(caught.value)


def test_unknown_arch_lists_the_supported_ones() -> None:
    with pytest.raises(ValueError, match="not supported by NVRTC") as caught:
        jit.compile(SAXPY_SOURCE, arch="sm_99")
    assert "sm_80" in str(caught.value)
    assert "sm_90" in str(caught.value)


@pytest.mark.parametrize("arch", ["compute_90", "sm90", "90", "sm_9", "SM_90"])
def test_malformed_arch_is_refused(arch: str) -> None:
    with pytest.raises(ValueError, match="is not a GPU architecture"):
        jit.compile(SAXPY_SOURCE, arch=arch)


@pytest.mark.parametrize(
    ("arch", "match"),
    [
        ("sm_89a", r"arch='sm_89a' does not exist: architecture-specific .* sm_90; use 'sm_89'"),
        ("sm_80a", "architecture-specific targets \\('a'\\) start at sm_90"),
        ("sm_90f", r"arch='sm_90f' does not exist: family-specific .* sm_100; use 'sm_90'"),
    ],
)
def test_a_suffix_the_architecture_lacks_is_refused(arch: str, match: str) -> None:
    """Regression: sm_89a passed validation, and NVRTC then said only "invalid or no value
    specified with --nv_arch flag"."""
    with pytest.raises(ValueError, match=match):
        jit.compile(SAXPY_SOURCE, arch=arch)


def test_invalid_name_expression_is_a_compile_error() -> None:
    source = "template <int N> __global__ void k(int* p) { *p = N; }\n"
    with pytest.raises(jit.CompileError, match="name expression"):
        jit.compile(source, arch="sm_80", name_expressions=["k<float>"])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"include_dirs": None}, TypeError, "include_dirs must be a directory .* got None"),
        ({"include_dirs": 123}, TypeError, "include_dirs must be a directory .* got 123"),
        ({"include_dirs": b"/tmp"}, TypeError, "include_dirs must be a directory .* got b'/tmp'"),
        ({"include_dirs": ["/tmp", None]}, TypeError, r"include_dirs\[1\] must be .* got None"),
        ({"defines": [("A", 1)]}, TypeError, r"defines must map macro names .* got \[\('A', 1\)\]"),
        ({"defines": {"A": 1, 2: 3}}, TypeError, "defines' keys must be macro names .* got 2"),
        ({"defines": {"A": 1.5j}}, TypeError, r"defines\['A'\] must be str, int, .* got 1.5j"),
        ({"defines": {"A": "1\n#error x"}}, ValueError, r"defines\['A'\]=.* has a line break"),
        ({"name_expressions": None}, TypeError, "name_expressions must be a sequence .* got None"),
        ({"name_expressions": ["k", 3]}, TypeError, r"name_expressions\[1\] must be a non-empty"),
        ({"name": "a\nb.cu"}, ValueError, "name='a\\\\nb.cu' has a line break"),
    ],
)
def test_wrong_argument_types_name_the_argument(kwargs: dict, error: type, match: str) -> None:
    """Regression: Python's own errors ("'NoneType' object is not iterable", "'list' object
    has no attribute 'items'", "'<' not supported between ...") named no argument."""
    with pytest.raises(error, match=match):
        jit.compile(SAXPY_SOURCE, arch="sm_80", **kwargs)


def test_numpy_integers_are_define_values() -> None:
    np = pytest.importorskip("numpy")
    source = '#if VALUE != 3\n#error VALUE\n#endif\nextern "C" __global__ void k() {}\n'
    assert jit.compile(source, arch="sm_80", defines={"VALUE": np.int32(3)}).cubin


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"source": SAXPY_SOURCE + "\udcff"}, "source is not valid text: '\\\\udcff' at index"),
        ({"headers": {"h.h": "\udcff"}}, r"headers\['h.h'\] is not valid text"),
        ({"headers": {"h\udcff.h": "x"}}, "header name .* is not valid text"),
        ({"defines": {"A": "\udcff"}}, r"defines\['A'\] is not valid text"),
        ({"name": "k\udcff.cu"}, "name is not valid text"),
        ({"name_expressions": ["k\udcff"]}, r"name_expressions\[0\] is not valid text"),
    ],
)
def test_lone_surrogates_name_the_argument(kwargs: dict, match: str) -> None:
    """Regression: a bare UnicodeEncodeError that named no argument."""
    with pytest.raises(ValueError, match=match):
        jit.compile(**{"source": SAXPY_SOURCE, "arch": "sm_80", **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"source": SAXPY_SOURCE + "\0 garbage {{{"}, "source has a NUL character at index"),
        ({"headers": {"h.h": "// a\0b"}}, r"headers\['h.h'\] has a NUL character at index 4"),
        ({"defines": {"A": "1\0"}}, r"defines\['A'\] has a NUL"),
        ({"source": ""}, "source='' is empty"),
        ({"source": " \n\t"}, "is empty; there is nothing to compile"),
    ],
)
def test_a_nul_or_an_empty_source_is_refused(kwargs: dict, match: str) -> None:
    """Regression: NVRTC stopped reading at a NUL (so the garbage after it compiled), and an
    empty source gave a cubin without kernels."""
    with pytest.raises(ValueError, match=match):
        jit.compile(**{"source": SAXPY_SOURCE, "arch": "sm_80", **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"defines": {"1BAD": 1}}, ValueError),
        ({"defines": {"OK": [1]}}, TypeError),
        ({"headers": {"": "x"}}, TypeError),
        ({"name_expressions": "k<1>"}, TypeError),
        ({"target": "fatbin"}, ValueError),
        ({"include_dirs": ["/no/such/dir"]}, ValueError),
        ({"options": {"std": "c++17"}}, TypeError),
    ],
)
def test_invalid_arguments_are_refused(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        jit.compile(SAXPY_SOURCE, arch="sm_80", **kwargs)


def test_cache_must_be_a_bool() -> None:
    """Regression: cache="no" was taken as True (a non-empty str)."""
    for cache in ("no", 0, None):
        with pytest.raises(TypeError, match=f"cache must be True or False, got {cache!r}"):
            jit.compile(SAXPY_SOURCE, arch="sm_80", cache=cache)  # type: ignore[arg-type]
    request = jit.CompileRequest(SAXPY_SOURCE, arch="sm_80")
    with pytest.raises(TypeError, match="cache must be True or False, got 'no'"):
        compile_request(request, cache="no")  # type: ignore[arg-type]


def test_bytes_that_are_not_utf8_name_the_argument() -> None:
    """Regression: a bare UnicodeDecodeError that named neither source nor the header."""
    latin1 = "// caf\xe9\n".encode("latin-1") + SAXPY_SOURCE.encode()
    with pytest.raises(ValueError, match=r"source must be UTF-8 text .* byte 6 \(b'\\xe9'\)"):
        jit.compile(latin1, arch="sm_80")
    with pytest.raises(ValueError, match=r"headers\['tile.h'\] must be UTF-8 text"):
        jit.compile(SAXPY_SOURCE, arch="sm_80", headers={"tile.h": b"\xff"})


def test_compile_error_pickles_with_its_details() -> None:
    with pytest.raises(jit.CompileError) as caught:
        jit.compile("this is not C++\n", arch="sm_80")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert copy.log == caught.value.log
    assert copy.options == caught.value.options


def test_no_gpu_needed_when_arch_is_explicit_and_default_arch_needs_one() -> None:
    if jit.device_count() > 0:
        pytest.skip("this machine has a GPU; the default arch is tested in the GPU tier")
    with pytest.raises(ValueError, match="pass arch explicitly"):
        jit.compile(SAXPY_SOURCE)


def test_nvrtc_info_reports_the_loaded_library() -> None:
    info = jit.nvrtc_info()
    assert info.version[0] in (12, 13)
    assert info.library is not None
    assert Path(info.library).is_file()
    assert "nvrtc" in Path(info.library).name
    assert info.origin
    assert 80 in info.supported_archs
    import cuda.bindings

    # cuda-bindings N loads NVRTC N: the report must agree with the bindings.
    assert str(info.version[0]) == cuda.bindings.__version__.split(".")[0]


def test_cuda_headers_are_found_without_a_toolkit() -> None:
    headers = jit.cuda_headers()
    assert headers.found
    assert (Path(headers.include_dirs[0]) / "cuda_fp16.h").is_file()


def _value_in_ptx(code: jit.CompiledCode) -> str:
    """The constant a `y[0] = VALUE;` kernel stores, read from its PTX."""
    match = re.search(r"mov\.u32\s+%r\d+,\s*(\d+);", code.ptx)
    assert match is not None, code.ptx
    return match.group(1)


_VALUE_SOURCE = '#include "config.h"\nextern "C" __global__ void k(int* y) { y[0] = VALUE; }\n'


def test_a_header_in_the_current_directory_does_not_shadow_include_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: NVRTC looked for the program's quoted includes in the process's current
    directory first, and the cache key did not cover it: a stray config.h there won, and
    whichever directory compiled first decided the cubin every directory got."""
    include = tmp_path / "include"
    include.mkdir()
    (include / "config.h").write_text("#define VALUE 2222\n")
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "config.h").write_text("#define VALUE 3333\n")
    monkeypatch.chdir(stray)
    code = jit.compile(_VALUE_SOURCE, include_dirs=[include], arch="sm_90", target="ptx")
    assert _value_in_ptx(code) == "2222"


def test_a_header_only_in_the_current_directory_is_not_found_and_the_hint_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a header found only in the current directory compiled, but editing it
    never recompiled."""
    (tmp_path / "config.h").write_text("#define VALUE 1\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(jit.CompileError) as caught:
        jit.compile(_VALUE_SOURCE, arch="sm_90")
    assert "'config.h' is in the current directory, which spio-jit does not search" in str(
        caught.value
    )
    assert jit.compile(_VALUE_SOURCE, include_dirs=[tmp_path], arch="sm_90").cubin


def test_diagnostics_and_log_name_the_program_as_given() -> None:
    """NVRTC compiles the program under another name (see _nvrtc._PROGRAM); what the caller
    sees names theirs."""
    source = 'extern "C" __global__ void k(int* y) {\n    y[0] = 1\n}\n'
    with pytest.raises(jit.CompileError) as caught:
        jit.compile(source, arch="sm_80", name='dir\\my "kernel".cu')
    error = caught.value
    assert error.diagnostics[0].file == 'dir\\my "kernel".cu'
    assert error.diagnostics[0].line == 3
    assert 'detected in the compilation of "dir\\my "kernel".cu"' in error.log
    assert "program.cu" not in error.log
    assert re.search(r">\s+3 \| }", str(error))
    warned = jit.compile("__global__ void k() { int unused; }\n", arch="sm_80", name="w.cu")
    assert warned.log.startswith("w.cu(1): warning")


def test_a_quoted_include_that_an_in_memory_header_finds_in_the_current_directory_is_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NVRTC places in-memory headers in the current directory, so their quoted includes
    are looked for there first; such a file is part of the key, and its edits recompile."""
    include = tmp_path / "include"
    include.mkdir()
    (include / "config.h").write_text("#define VALUE 2222\n")
    monkeypatch.chdir(tmp_path)
    headers = {"generated/types.h": '#include "config.h"\n'}
    source = _VALUE_SOURCE.replace("config.h", "generated/types.h")
    kwargs = {"headers": headers, "include_dirs": [include], "arch": "sm_90", "target": "ptx"}
    assert _value_in_ptx(jit.compile(source, **kwargs)) == "2222"
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "config.h").write_text("#define VALUE 3333\n")
    shadowed = jit.compile(source, **kwargs)
    assert not shadowed.from_cache
    assert _value_in_ptx(shadowed) == "3333"
    (tmp_path / "generated" / "config.h").write_text("#define VALUE 44444\n")
    edited = jit.compile(source, **kwargs)
    assert not edited.from_cache
    assert _value_in_ptx(edited) == "44444"


def test_no_code_from_nvrtc_is_a_compile_error_and_is_not_cached(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: NVRTC's empty output (as with -dlto) was returned and cached as a cubin."""
    from spio.jit import _nvrtc

    monkeypatch.setattr(_nvrtc, "compile_program", lambda *args: _nvrtc.NvrtcOutput(b"", {}, ""))
    with pytest.raises(jit.CompileError, match=r"\(no cubin\)[\s\S]*NVRTC made no cubin"):
        jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert not list(isolated_cache.glob("v*/*/*.bin"))
