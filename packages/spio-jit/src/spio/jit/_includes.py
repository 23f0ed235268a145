"""Include directories in the compile cache key: what is under them, cheap to ask again.

A cache hit must notice an edited header, so every compile stats each file under its
include_dirs and keys on (relative path, size, modification time, change time). That is
all a repeated compile does there: each directory's listing is kept per process and read
again only when the directory itself changed (its mtime moves when an entry is added,
removed or renamed), and no file is opened. A tree of 20 headers in 3 directories costs
23 stat calls per compile, where os.walk also opened and read every directory.

File times are coarse (one clock tick, 1 to 10 ms, on Linux; 2 s on FAT), so a change
made within a tick of the previous look can leave them unchanged. A listing is therefore
kept only once its directory has been quiet for _QUIET_NS; a file rewritten in place with
the same size within one tick of a compile is not seen, as with make and ccache.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
import time
from collections.abc import Iterator

# Walking stops here; bigger trees are keyed by their first files only.
MAX_FILES = 5000
_QUIET_NS = 2_000_000_000
_MAX_LISTINGS = 10_000

# directory -> ((mtime_ns, ctime_ns, inode), subdirectory names, (name, path) of files)
_Listing = tuple[tuple[int, int, int], tuple[str, ...], tuple[tuple[str, str], ...]]
_listings: dict[str, _Listing] = {}


def directory(entry: str | os.PathLike[str]) -> str:
    """Return an include_dirs entry as an absolute path, without touching the disk.

    NVRTC gets the same string as the fingerprint, so both see the same files whatever
    symlinks lie on the way; Path.resolve() would cost an lstat per path component.
    """
    return os.path.abspath(os.path.expanduser(os.fspath(entry)))


def fingerprint(root: str) -> bytes:
    """Return the SHA-256 of (relative path, size, mtime, ctime) of every file under root.

    Raises NotADirectoryError when root is not a directory.
    """
    try:
        root_stat = os.stat(root)
    except OSError:
        root_stat = None
    if root_stat is None or not stat_module.S_ISDIR(root_stat.st_mode):
        raise NotADirectoryError(root)
    digest = hashlib.sha256()
    for relative, info in _files(root, root_stat, time.time_ns()):
        line = f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\n"
        digest.update(line.encode())
    return digest.digest()


def _files(root: str, root_stat: os.stat_result, now: int) -> Iterator[tuple[str, os.stat_result]]:
    """Yield (relative path, stat) of each file under root, in a fixed order.

    Sorted by name, each directory's files before its subdirectories; symlinked directories
    are not entered (as with os.walk).
    """
    count = 0
    pending = [("", root, root_stat)]
    while pending:
        prefix, path, path_stat = pending.pop()
        subdirectories, files = _listing(path, path_stat, now)
        for name, file_path in files:
            try:
                info = os.stat(file_path)
            except OSError:  # gone since the listing, or a broken symlink
                continue
            yield prefix + name, info
            count += 1
            if count >= MAX_FILES:
                return
        for name in reversed(subdirectories):
            subdirectory = os.path.join(path, name)
            try:
                pending.append((f"{prefix}{name}/", subdirectory, os.stat(subdirectory)))
            except OSError:
                continue


def _listing(
    path: str, path_stat: os.stat_result, now: int
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    signature = (path_stat.st_mtime_ns, path_stat.st_ctime_ns, path_stat.st_ino)
    kept = _listings.get(path)
    if kept is not None and kept[0] == signature:
        return kept[1], kept[2]
    subdirectories, files = [], []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    subdirectories.append(entry.name)
                elif not entry.is_dir():
                    files.append((entry.name, entry.path))
    except OSError:  # unreadable: keyed as empty, as os.walk skips it
        return (), ()
    listing = (signature, tuple(sorted(subdirectories)), tuple(sorted(files)))
    if now - max(signature[0], signature[1]) > _QUIET_NS:
        if len(_listings) >= _MAX_LISTINGS:
            _listings.clear()
        _listings[path] = listing
    return listing[1], listing[2]


def forget() -> None:
    """Drop the kept directory listings, so the next fingerprints read every directory."""
    _listings.clear()
