"""The disk cache: hits, misses, keys, corruption, concurrency, and the switches."""

from __future__ import annotations

import builtins
import multiprocessing
import os
import re
import statistics
import threading
import time
from pathlib import Path

import pytest
from jit_testkit import SAXPY_SOURCE, TENSOR_CORE_SOURCE, TILE_HEADERS, compile_in_child

import spio.jit as jit
from spio.jit import _cache, _includes


def _entry_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("v*/*/*.bin"))


def test_miss_then_hit_returns_the_same_code(isolated_cache: Path) -> None:
    first = jit.compile(SAXPY_SOURCE, arch="sm_80")
    second = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert not first.from_cache
    assert second.from_cache
    assert second == first
    assert len(_entry_files(isolated_cache)) == 1


def test_hit_keeps_lowered_names_and_log() -> None:
    source = "template <int N> __global__ void k(int* p) { int unused; *p = N; }\n"
    first = jit.compile(source, arch="sm_80", name_expressions=["k<3>"])
    second = jit.compile(source, arch="sm_80", name_expressions=["k<3>"])
    assert second.from_cache
    assert second.lowered_names == first.lowered_names == {"k<3>": "_Z1kILi3EEvPi"}
    assert "unused" in second.log
    assert second.log == first.log


def test_a_hit_costs_less_than_a_millisecond() -> None:
    kwargs = {"headers": TILE_HEADERS, "arch": "sm_90", "name_expressions": ["tile_mma<float, 1>"]}
    jit.compile(TENSOR_CORE_SOURCE, **kwargs)
    timings = []
    for _ in range(50):
        start = time.perf_counter()
        hit = jit.compile(TENSOR_CORE_SOURCE, **kwargs)
        timings.append(time.perf_counter() - start)
        assert hit.from_cache
    assert statistics.median(timings) < 1e-3, f"median hit took {statistics.median(timings)} s"


@pytest.mark.parametrize(
    "change",
    [
        {"source": SAXPY_SOURCE + "\n// edited\n"},
        {"arch": "sm_86"},
        {"defines": {"X": 1}},
        {"headers": {"unused.h": "// v2"}},
        {"name_expressions": ["saxpy"]},
        {"options": jit.CompileOptions(lineinfo=True)},
        {"target": "ptx"},
        {"name": "other.cu"},
    ],
)
def test_every_input_is_part_of_the_key(change: dict) -> None:
    base = {"source": SAXPY_SOURCE, "arch": "sm_80", "headers": {"unused.h": "// v1"}}
    reference = jit.compile(**base)
    changed = jit.compile(**{**base, **change})
    assert changed.key != reference.key
    assert not changed.from_cache


def test_key_ignores_the_order_of_headers_and_defines() -> None:
    first = jit.compile(
        SAXPY_SOURCE, arch="sm_80", headers={"a.h": "1", "b.h": "2"}, defines={"A": 1, "B": 2}
    )
    second = jit.compile(
        SAXPY_SOURCE, arch="sm_80", headers={"b.h": "2", "a.h": "1"}, defines={"B": 2, "A": 1}
    )
    assert second.from_cache
    assert second.key == first.key


def _header_tree(root: Path, files: int = 20) -> Path:
    """Write a tree of headers like spio-dims' (3 directories), dated an hour ago."""
    for index in range(files):
        folder = root / "lib" / ("arch" if index % 3 == 0 else "detail" if index % 3 == 1 else "")
        folder.mkdir(parents=True, exist_ok=True)
        header = folder / f"h{index}.h"
        header.write_text(f"#pragma once\nconstexpr int kValue{index} = {index};\n")
        hour_ago = time.time_ns() - 3600 * 10**9
        os.utime(header, ns=(hour_ago, hour_ago))
    return root


def test_a_hit_with_include_dirs_costs_less_than_a_millisecond(tmp_path: Path) -> None:
    # Regression: spio demo's second compile (a hit, include_dirs with 20 headers) took
    # 12.5 ms on the GPU machine: the include tree was walked with os.walk, each path
    # resolved and the entry re-read and re-hashed on every compile (71 system calls).
    includes = _header_tree(tmp_path / "include")
    source = '#include "lib/arch/h0.h"\nextern "C" __global__ void k(int* p) { *p = kValue0; }\n'
    kwargs = {"include_dirs": [includes], "headers": {"types.h": "// " + "x" * 700}}
    first = jit.compile(source, arch="sm_90", name="demo.cu", **kwargs)
    assert not first.from_cache
    timings = []
    for _ in range(20):
        start = time.perf_counter()
        hit = jit.compile(source, arch="sm_90", name="demo.cu", **kwargs)
        timings.append(time.perf_counter() - start)
        assert hit.from_cache
    assert statistics.median(timings) < 1e-3, f"median hit took {statistics.median(timings)} s"


def test_a_repeated_hit_reads_no_directory_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hit stats the files under include_dirs and the entry, and does nothing else."""
    monkeypatch.setattr(_includes, "_QUIET_NS", -1)  # as for headers installed long ago
    includes = _header_tree(tmp_path / "include")
    source = 'extern "C" __global__ void k(int* p) { *p = 1; }\n'
    jit.compile(source, include_dirs=[includes], arch="sm_90")
    opened: list[object] = []
    real_open, real_scandir = builtins.open, os.scandir
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    monkeypatch.setattr(os, "scandir", lambda *a: opened.append(a) or real_scandir(*a))
    assert jit.compile(source, include_dirs=[includes], arch="sm_90").from_cache
    assert opened == []


def test_adding_a_file_under_include_dirs_changes_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_includes, "_QUIET_NS", -1)  # keep even fresh listings
    _includes.forget()
    includes = tmp_path / "include"
    includes.mkdir()
    source = 'extern "C" __global__ void k(int* p) { *p = 1; }\n'
    (includes / "a.h").write_text("// a\n")
    first = jit.compile(source, include_dirs=[includes], arch="sm_80")
    time.sleep(0.02)  # past one timestamp tick, so the directory's mtime moves
    (includes / "b.h").write_text("// b\n")
    second = jit.compile(source, include_dirs=[includes], arch="sm_80")
    assert second.key != first.key
    (includes / "b.h").unlink()
    assert jit.compile(source, include_dirs=[includes], arch="sm_80").key == first.key


def test_an_entry_rewritten_by_another_process_is_read_again(isolated_cache: Path) -> None:
    first = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert jit.compile(SAXPY_SOURCE, arch="sm_80").from_cache  # kept in this process now
    (path,) = _entry_files(isolated_cache)
    entry = _cache.decode_entry(first.key, path.read_bytes())
    assert entry is not None
    other = _cache.CacheEntry(meta={**entry.meta, "log": "written elsewhere"}, code=entry.code)
    replacement = path.with_suffix(".tmp")
    replacement.write_bytes(_cache.encode_entry(first.key, other))
    os.replace(replacement, path)  # as every writer does
    assert jit.compile(SAXPY_SOURCE, arch="sm_80").log == "written elsewhere"
    path.unlink()
    assert not jit.compile(SAXPY_SOURCE, arch="sm_80").from_cache


def test_editing_a_file_under_include_dirs_recompiles(tmp_path: Path) -> None:
    header = tmp_path / "value.h"
    header.write_text("#define VALUE 1\n")
    source = '#include "value.h"\nextern "C" __global__ void k(int* p) { *p = VALUE; }\n'
    first = jit.compile(source, include_dirs=[tmp_path], arch="sm_80")
    header.write_text("#define VALUE 22\n")
    second = jit.compile(source, include_dirs=[tmp_path], arch="sm_80")
    assert not second.from_cache
    assert second.key != first.key


def _corrupt_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-10])


def _corrupt_flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _corrupt_garbage(path: Path) -> None:
    path.write_bytes(b"not a cache entry")


def _corrupt_empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    "corrupt", [_corrupt_truncate, _corrupt_flip, _corrupt_garbage, _corrupt_empty]
)
def test_corrupted_entry_is_detected_and_rebuilt(isolated_cache: Path, corrupt: object) -> None:
    first = jit.compile(SAXPY_SOURCE, arch="sm_80")
    (path,) = _entry_files(isolated_cache)
    corrupt(path)  # type: ignore[operator]
    # As the next process finds it: this one keeps the entry it wrote and would notice an
    # in-place edit only when the file's size or mtime moved (same-size flips in one
    # timestamp tick do not).
    _cache.forget_recent()
    rebuilt = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert not rebuilt.from_cache
    assert rebuilt.code == first.code
    hit = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert hit.from_cache  # the rebuilt entry is whole again


def test_a_corrupted_entry_is_warned_of_once_per_compile(
    isolated_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: the compile's lookups before and after taking the key's lock each warned."""
    jit.compile(SAXPY_SOURCE, arch="sm_80")
    (path,) = _entry_files(isolated_cache)
    _corrupt_garbage(path)
    _cache.forget_recent()
    with caplog.at_level("WARNING", logger="spio.jit"):
        assert not jit.compile(SAXPY_SOURCE, arch="sm_80").from_cache
    warnings = [r.getMessage() for r in caplog.records if "corrupted" in r.getMessage()]
    assert warnings == [f"spio-jit cache entry {path} is corrupted; recompiling"]
    caplog.clear()
    _corrupt_empty(path)  # corrupted again, as a file of its own: warned of again
    _cache.forget_recent()
    with caplog.at_level("WARNING", logger="spio.jit"):
        jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert sum("corrupted" in r.getMessage() for r in caplog.records) == 1


def test_entry_under_another_key_is_a_miss() -> None:
    entry = _cache.CacheEntry(meta={"log": ""}, code=b"code")
    data = _cache.encode_entry("a" * 64, entry)
    assert _cache.decode_entry("a" * 64, data) == entry
    assert _cache.decode_entry("b" * 64, data) is None


def test_disable_cache_env_writes_nothing(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPIO_JIT_DISABLE_CACHE", "1")
    first = jit.compile(SAXPY_SOURCE, arch="sm_80")
    second = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert not first.from_cache
    assert not second.from_cache
    assert not _entry_files(isolated_cache)
    assert not jit.cache_info().enabled


def test_cache_false_skips_the_cache(isolated_cache: Path) -> None:
    jit.compile(SAXPY_SOURCE, arch="sm_80", cache=False)
    assert not _entry_files(isolated_cache)


def test_invalid_disable_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPIO_JIT_DISABLE_CACHE", "maybe")
    with pytest.raises(ValueError, match="SPIO_JIT_DISABLE_CACHE"):
        jit.compile(SAXPY_SOURCE, arch="sm_80")


def test_unwritable_cache_still_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(blocker / "cache"))
    first = jit.compile(SAXPY_SOURCE, arch="sm_80")
    second = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert first.code == second.code
    assert not second.from_cache


def test_cache_info_and_clear(isolated_cache: Path) -> None:
    jit.compile(SAXPY_SOURCE, arch="sm_80")
    jit.compile(SAXPY_SOURCE, arch="sm_90")
    info = jit.cache_info()
    assert info.directory == isolated_cache
    assert info.entries == 2
    assert info.size_bytes > 0
    assert jit.clear_cache() == 2
    assert jit.cache_info().entries == 0
    assert not jit.compile(SAXPY_SOURCE, arch="sm_80").from_cache


def test_clear_counts_only_the_entries_it_removed(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: clear() counted the entries before deleting them with errors ignored, so
    an entry it could not delete was reported removed."""
    jit.compile(SAXPY_SOURCE, arch="sm_80")
    jit.compile(SAXPY_SOURCE, arch="sm_90")
    kept = _entry_files(isolated_cache)[0]
    unlink = os.unlink

    def refuse_kept(path: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
        if os.path.basename(path) == kept.name:  # (rmtree passes names beside a dir_fd)
            raise PermissionError(13, "Permission denied", str(path))
        unlink(path, dir_fd=dir_fd)

    with monkeypatch.context() as patch:
        patch.setattr(os, "unlink", refuse_kept)
        assert jit.clear_cache() == 1
    assert _entry_files(isolated_cache) == [kept]
    assert jit.clear_cache() == 1
    assert jit.cache_info().entries == 0


def test_processes_compiling_the_same_kernel_at_once(isolated_cache: Path) -> None:
    """Four processes race on one key: none fails, one compiles, the others read its entry."""
    context = multiprocessing.get_context("spawn")
    processes = 4
    barrier = context.Barrier(processes)
    results = context.Queue()
    children = [
        context.Process(target=compile_in_child, args=(str(isolated_cache), barrier, results))
        for _ in range(processes)
    ]
    for child in children:
        child.start()
    outcomes = [results.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    assert sum(1 for from_cache, _ in outcomes if not from_cache) == 1
    assert len({code for _, code in outcomes}) == 1
    (path,) = _entry_files(isolated_cache)
    assert _cache.decode_entry(path.stem, path.read_bytes()) is not None


def test_hit_keeps_the_order_of_name_expressions() -> None:
    source = "template <int N> __global__ void k(int* p) { *p = N; }\n"
    expressions = ["k<9>", "k<1>", "k<5>"]
    jit.compile(source, arch="sm_80", name_expressions=expressions)
    hit = jit.compile(source, arch="sm_80", name_expressions=expressions)
    assert hit.from_cache
    assert list(hit.lowered_names) == expressions


def test_editing_a_header_behind_a_symlinked_directory_recompiles(tmp_path: Path) -> None:
    """Regression: a symlinked subdirectory of an include dir (include/vendor ->
    ../third_party/vendor) was not walked, so its headers were not in the key."""
    vendor = tmp_path / "third_party" / "vendor"
    vendor.mkdir(parents=True)
    (vendor / "v.h").write_text("#define VALUE 1\n")
    include = tmp_path / "include"
    include.mkdir()
    (include / "vendor").symlink_to(vendor)
    (include / "loop").symlink_to(include)  # a link loop ends the walk, not the process
    source = '#include "vendor/v.h"\nextern "C" __global__ void k(int* p) { *p = VALUE; }\n'
    first = jit.compile(source, include_dirs=[include], arch="sm_80")
    (vendor / "v.h").write_text("#define VALUE 22\n")
    second = jit.compile(source, include_dirs=[include], arch="sm_80")
    assert not second.from_cache
    assert second.key != first.key


def test_an_include_dir_too_large_to_fingerprint_is_not_cached(
    isolated_cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Regression: only the first 5000 files were keyed, so an edit to a later one was
    served a stale cubin. Now such compiles bypass the cache, with one warning."""
    monkeypatch.setattr(_includes, "MAX_FILES", 5)
    include = tmp_path / "include"
    (include / "aaa").mkdir(parents=True)
    for index in range(5):
        (include / "aaa" / f"f{index}.h").write_text("")
    (include / "zzz").mkdir()
    last = include / "zzz" / "last.h"
    last.write_text("#define VALUE 1\n")
    source = '#include "zzz/last.h"\nextern "C" __global__ void k(int* p) { *p = VALUE; }\n'
    with caplog.at_level("WARNING", logger="spio.jit"):
        first = jit.compile(source, include_dirs=[include], arch="sm_80", target="ptx")
        last.write_text("#define VALUE 22\n")
        second = jit.compile(source, include_dirs=[include], arch="sm_80", target="ptx")
    assert not second.from_cache
    assert re.search(r"mov\.u32\s+%r\d+,\s*22;", second.ptx)
    assert first.ptx != second.ptx
    assert not _entry_files(isolated_cache)
    warnings = [r.getMessage() for r in caplog.records if "does not cache" in r.getMessage()]
    assert len(warnings) == 1
    assert f"include_dirs entry {include}: it holds more than 5 files" in warnings[0]


def test_threads_evicting_the_same_recent_entry_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: evicting from the in-memory table of recent entries read the oldest entry,
    then removed it, unguarded: two threads read the same one, and the second removal raised
    KeyError out of a compile (seen with 8 threads reading 200 cached kernels)."""
    entry = _cache.CacheEntry(meta={}, code=b"")
    others: list[threading.Thread] = []

    class RacingTable(dict):  # type: ignore[type-arg]
        """Lets another thread evict between this thread's choice of the oldest entry and
        its removal, the moment the race needs."""

        def pop(self, *args: object) -> object:
            if threading.current_thread() is threading.main_thread():
                other = threading.Thread(target=_cache._remember, args=("other", (0, 0, 0), entry))
                other.start()
                other.join(0.2)  # with the table guarded, it waits for this eviction to end
                others.append(other)
            return super().pop(*args)

    table = RacingTable((f"file{i}", ((0, 0, 0), entry)) for i in range(_cache._MAX_RECENT))
    monkeypatch.setattr(_cache, "_recent", table)
    _cache._remember("new", (0, 0, 0), entry)
    others[0].join(10)
    assert {"new", "other"} <= set(table)
    assert len(table) == _cache._MAX_RECENT


def test_an_unusable_cache_is_warned_of_once(
    isolated_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: "warn once" compared whole messages, which named each key's lock file and
    shard, so an unusable cache warned on every compile."""
    isolated_cache.mkdir()
    (isolated_cache / "v1").write_text("a file where the entries' directory should be")
    with caplog.at_level("WARNING", logger="spio.jit"):
        for value in range(4):
            jit.compile(SAXPY_SOURCE, arch="sm_80", defines={"V": value})
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert any("could not write its cache in" in m for m in messages)
    assert any("compiles without the cache lock in" in m for m in messages)


def test_waiting_for_another_process_s_lock_is_announced(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: a compile blocked behind another process's lock (a process stopped at a
    breakpoint holds it) waited up to 10 minutes without a word."""
    import filelock

    monkeypatch.setattr(_cache, "LOCK_NOTICE_S", 0.05)
    key = jit.compile(SAXPY_SOURCE, arch="sm_80", cache=False).key
    lock_path = _cache.DiskCache(isolated_cache).path(key).with_suffix(".lock")
    lock_path.parent.mkdir(parents=True)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # in a thread of its own: filelock's locks belong to a thread
        with filelock.FileLock(str(lock_path)):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(30)
    threading.Timer(0.5, release.set).start()
    with caplog.at_level("WARNING", logger="spio.jit"):
        assert not jit.compile(SAXPY_SOURCE, arch="sm_80").from_cache
    holder.join()
    (message,) = [r.getMessage() for r in caplog.records]
    assert f"waiting for another process that compiles the same kernel and holds {lock_path}" in (
        message
    )


def test_lock_files_are_removed_once_the_entry_is_written(isolated_cache: Path) -> None:
    """Regression: every compiled key left its <key>.lock behind, one file per entry."""
    jit.compile(SAXPY_SOURCE, arch="sm_80")
    jit.compile(SAXPY_SOURCE, arch="sm_86")
    assert len(_entry_files(isolated_cache)) == 2
    assert list(isolated_cache.glob("v*/*/*.lock")) == []


def test_temporaries_of_killed_writers_are_counted_and_removed_when_stale(
    isolated_cache: Path,
) -> None:
    """Regression: a writer killed mid-write left its temporary file forever (only
    clear_cache removed it), and cache_info did not count it."""
    key = jit.compile(SAXPY_SOURCE, arch="sm_80", cache=False).key
    shard = isolated_cache / f"v{_cache.FORMAT}" / key[:2]
    shard.mkdir(parents=True)
    stale, fresh = shard / f".{key[:16]}.stale.tmp", shard / f".{key[:16]}.fresh.tmp"
    stale.write_bytes(b"x" * 1000)
    fresh.write_bytes(b"x" * 10)
    two_hours_ago = time.time() - 2 * 3600
    os.utime(stale, (two_hours_ago, two_hours_ago))
    info = jit.cache_info()
    assert (info.entries, info.temp_files, info.temp_bytes) == (0, 2, 1010)
    jit.compile(SAXPY_SOURCE, arch="sm_80")  # writes into that directory
    assert not stale.exists()
    assert fresh.exists()  # may be a write in progress
    info = jit.cache_info()
    assert (info.entries, info.temp_files) == (1, 1)
