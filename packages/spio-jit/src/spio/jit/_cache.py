"""The on-disk cache of compiled kernels.

Layout: <cache dir>/v<FORMAT>/<key[:2]>/<key>.bin, one file per compiled program, and a
<key>.lock beside it while a process compiles that key.

Entry format (little-endian):

    magic      8 bytes   b"SPIOJIT\\0"
    format     u32       FORMAT
    meta_len   u32       length of the JSON metadata
    code_len   u64       length of the code (cubin or PTX)
    digest     32 bytes  sha256 of metadata + code
    metadata   meta_len bytes of UTF-8 JSON (includes the key, so a misplaced file is a miss)
    code       code_len bytes

A reader checks all of it, so a truncated or corrupted file reads as a miss and is rebuilt.
Writers write a temporary file in the same directory and os.replace it into place, so readers
see either nothing or a whole entry. Processes compiling the same key serialize on a file
lock; the loser of the race finds the winner's entry when it gets the lock. Reading takes no
lock.

The holder of a lock removes the lock file once the key's entry is in place. That is safe
because the lock only saves duplicate compiles, and from then on there is nothing to compile:
a process that locks the removed file (opened before the removal) or a new file at that path
finds the entry (recent filelock versions also retry a lock whose file was removed). A temporary
file older than STALE_TEMP_S belongs to a killed writer; the next write to its directory
removes it, and cache_info counts the temporary files.

A process keeps the entries it read or wrote last, each with its file's (inode, size,
mtime), and answers a repeated lookup with one stat instead of reading and checking the
file again. Every write replaces the file (a new inode), so any entry another process
writes or clear_cache() removes is noticed; only an in-place edit within one timestamp tick
of the last look would not be (the next process checks the bytes).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import struct
import tempfile
import threading
import time
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spio.jit import _env

FORMAT = 1
MAGIC = b"SPIOJIT\0"
_HEADER = struct.Struct("<8sIIQ32s")
# A process waiting this long for another to compile the same key compiles it itself.
LOCK_TIMEOUT_S = 600.0
# A wait for another process's lock longer than this is announced: a stopped process (Ctrl-Z,
# a debugger's breakpoint) keeps its lock until it runs again.
LOCK_NOTICE_S = 5.0
# A temporary file this old belongs to no live writer: a write takes well under a second.
STALE_TEMP_S = 3600.0

_MAX_RECENT = 64

_log = logging.getLogger("spio.jit")
# Guards the three tables below: compiles run in threads too, and evicting from _recent is a
# read then a write.
_tables_lock = threading.Lock()
# entry file -> ((inode, size, mtime_ns) of the file, its entry); see the module doc.
_recent: dict[str, tuple[tuple[int, int, int], CacheEntry]] = {}
# (what failed, cache directory, errno) of each problem warned about. Not the message: it
# names a key's file, and an unusable cache fails the same way for every key.
_warned: set[Hashable] = set()
# entry file -> the signature of the corrupted file last warned about: a compile looks an
# entry up twice (before and after taking its lock), and one bad file is one warning.
_corrupted: dict[str, tuple[int, int, int]] = {}


def warn_once(problem: Hashable, message: str) -> None:
    """Log message as a warning, unless a warning was logged for the same problem."""
    with _tables_lock:
        if problem in _warned:
            return
        _warned.add(problem)
    _log.warning(message)


@dataclass(frozen=True)
class CacheEntry:
    """A cached compile result: metadata (JSON-compatible) and the code bytes."""

    meta: dict[str, Any]
    code: bytes


def encode_entry(key: str, entry: CacheEntry) -> bytes:
    """Serialize an entry in the format described in the module doc."""
    meta = json.dumps({**entry.meta, "key": key}, sort_keys=True).encode()
    digest = hashlib.sha256(meta + entry.code).digest()
    return _HEADER.pack(MAGIC, FORMAT, len(meta), len(entry.code), digest) + meta + entry.code


def decode_entry(key: str, data: bytes) -> CacheEntry | None:
    """Return the entry in data, or None if it is truncated, corrupted or for another key."""
    if len(data) < _HEADER.size:
        return None
    magic, version, meta_len, code_len, digest = _HEADER.unpack_from(data)
    if magic != MAGIC or version != FORMAT:
        return None
    if len(data) != _HEADER.size + meta_len + code_len:
        return None
    body = memoryview(data)[_HEADER.size :]
    if hashlib.sha256(body).digest() != digest:
        return None
    try:
        meta = json.loads(bytes(body[:meta_len]))
    except ValueError:
        return None
    if not isinstance(meta, dict) or meta.pop("key", None) != key:
        return None
    return CacheEntry(meta=meta, code=bytes(body[meta_len:]))


@dataclass(frozen=True)
class CacheInfo:
    """What the cache holds.

    Attributes:
        directory: the cache directory.
        enabled: False when SPIO_JIT_DISABLE_CACHE turns the cache off.
        entries: the number of cached kernels.
        size_bytes: their total size.
        temp_files: temporary files: writes in progress, or left by killed writers (the
            next write to their directory removes those an hour old; clear_cache all).
        temp_bytes: the temporary files' total size.
    """

    directory: Path
    enabled: bool
    entries: int
    size_bytes: int
    temp_files: int = 0
    temp_bytes: int = 0


class DiskCache:
    """Compiled programs on disk under one directory; safe across threads and processes."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._root = self.directory / f"v{FORMAT}"
        self._root_text = str(self._root)

    def path(self, key: str) -> Path:
        """Return the file that holds key's entry."""
        return self._root / key[:2] / f"{key}.bin"

    def _file(self, key: str) -> str:
        return os.path.join(self._root_text, key[:2], f"{key}.bin")

    def get(self, key: str) -> CacheEntry | None:
        """Return key's entry, or None on a miss (absent, unreadable, truncated, corrupted)."""
        file = self._file(key)
        try:
            # Before reading: if the file is replaced in between, the entry is kept under
            # the old file's signature and read again next time.
            signature = _signature(os.stat(file))
            recent = _recent.get(file)
            if recent is not None and recent[0] == signature:
                return recent[1]
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        entry = decode_entry(key, data)
        if entry is None:
            if _first_sight_of_corruption(file, signature):
                _log.warning("spio-jit cache entry %s is corrupted; recompiling", file)
            return None
        _remember(file, signature, entry)
        return entry

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store key's entry atomically; a failure to write is logged (once), not raised."""
        path = self.path(key)
        data = encode_entry(key, entry)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                os.replace(temp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
            _remember(self._file(key), _signature(os.stat(path)), entry)
        except OSError as error:
            warn_once(
                ("write", self.directory, error.errno),
                f"spio-jit could not write its cache in {self.directory}, so what it "
                f"compiles is not kept: {error}",
            )
            return
        _remove_stale_temps(path.parent)

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[bool]:
        """Hold key's inter-process lock; yields False if the lock could not be taken.

        A wait longer than LOCK_NOTICE_S is logged, naming the lock file; after
        LOCK_TIMEOUT_S the caller goes on without the lock. On the way out the lock file is
        removed when key's entry is in place (see the module doc).
        """
        import filelock

        path = self.path(key).with_suffix(".lock")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = filelock.FileLock(str(path))
            _acquire(lock, path)
        except (OSError, filelock.Timeout) as error:
            warn_once(
                ("lock", self.directory, getattr(error, "errno", None)),
                f"spio-jit compiles without the cache lock in {self.directory}, so processes "
                f"may compile the same kernel at once ({path}): {error}",
            )
            yield False
            return
        try:
            yield True
        finally:
            try:
                if os.path.exists(self._file(key)):
                    with contextlib.suppress(OSError):
                        os.unlink(path)
            finally:
                lock.release()

    def _files(self) -> Iterator[Path]:
        if self._root.is_dir():
            yield from self._root.glob("*/*.bin")

    def _temps(self) -> Iterator[Path]:
        if self._root.is_dir():
            yield from self._root.glob("*/.*.tmp")

    def info(self) -> CacheInfo:
        """Return the number and total size of the entries, and of the temporary files."""
        entries, size = _count(self._files())
        temps, temp_size = _count(self._temps())
        return CacheInfo(self.directory, _env.cache_enabled(), entries, size, temps, temp_size)

    def clear(self) -> int:
        """Remove every entry (and stale locks and temporaries); return how many entries this
        call deleted: one it cannot delete (permissions) stays, uncounted, with the
        directories that hold it."""
        removed = 0
        for path in list(self._files()):
            try:
                path.unlink()
            except OSError:  # gone already (another process cleared it), or not ours to delete
                continue
            removed += 1
        if self._root.is_dir():
            shutil.rmtree(self._root, ignore_errors=True)
        _recent.clear()
        return removed


def _acquire(lock: Any, path: Path) -> None:
    """Take a filelock, saying so when another process keeps it past LOCK_NOTICE_S; raise
    filelock.Timeout after LOCK_TIMEOUT_S in all."""
    import filelock

    notice = min(LOCK_NOTICE_S, LOCK_TIMEOUT_S)
    try:
        lock.acquire(timeout=notice)
        return
    except filelock.Timeout:
        pass
    _log.warning(
        "spio-jit is waiting for another process that compiles the same kernel and holds %s; "
        "after %.0f s in all, this process compiles the kernel itself",
        path,
        LOCK_TIMEOUT_S,
    )
    lock.acquire(timeout=LOCK_TIMEOUT_S - notice)


def _count(paths: Iterable[Path]) -> tuple[int, int]:
    """Return how many of paths still exist and their total size."""
    count = size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            size += path.stat().st_size
            count += 1
    return count, size


def _remove_stale_temps(directory: Path) -> None:
    """Remove the temporary files in directory older than STALE_TEMP_S (killed writers')."""
    oldest = time.time() - STALE_TEMP_S
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                    continue
                with contextlib.suppress(OSError):  # gone already, or not ours to delete
                    if entry.stat(follow_symlinks=False).st_mtime < oldest:
                        os.unlink(entry.path)
    except OSError:
        return


def _signature(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_ino, info.st_size, info.st_mtime_ns


def _remember(file: str, signature: tuple[int, int, int], entry: CacheEntry) -> None:
    with _tables_lock:
        if len(_recent) >= _MAX_RECENT:
            _recent.pop(next(iter(_recent)))  # the oldest
        _recent[file] = (signature, entry)


def _first_sight_of_corruption(file: str, signature: tuple[int, int, int]) -> bool:
    """Record a corrupted entry file; return False when this very file was seen already."""
    with _tables_lock:
        if _corrupted.get(file) == signature:
            return False
        if len(_corrupted) >= _MAX_RECENT:
            _corrupted.clear()
        _corrupted[file] = signature
        return True


def forget_recent() -> None:
    """Drop the entries this process keeps in memory, so the next lookups read the files."""
    _recent.clear()


def default_cache() -> DiskCache | None:
    """Return the cache the environment selects, or None when it is disabled."""
    if not _env.cache_enabled():
        return None
    return DiskCache(_env.cache_dir())


def cache_info() -> CacheInfo:
    """Return where the kernel cache is, whether it is enabled and how much it holds."""
    return DiskCache(_env.cache_dir()).info()


def clear_cache() -> int:
    """Delete every cached kernel; return how many entries were removed."""
    return DiskCache(_env.cache_dir()).clear()
