"""Include directories in the compile cache key: what is under them, cheap to ask again.

A cache hit must notice an edited header, so every compile stats each file under its
include_dirs and keys on (relative path, size, modification time, change time). That is
all a repeated compile does there: each directory's listing is kept per process and read
again only when the directory itself changed (its mtime moves when an entry is added,
removed or renamed), and no file is opened. A tree of 20 headers in 3 directories costs
23 stat calls per compile, where os.walk also opened and read every directory.

Symbolic links are followed, as NVRTC follows them: a file is keyed by its target's stat,
and a linked directory (include/vendor -> ../third_party/vendor) is walked like any other,
each directory once (by device and inode), so that a link loop ends.

A tree of more than MAX_FILES files is not fingerprinted (fingerprint returns None): keying
its first files only would serve a stale cubin after an edit further on, and statting every
file of a tree that large (an include_dirs entry such as /usr or a home directory) on every
compile would cost more than it saves. Such compiles bypass the cache; see _compile.

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

# The most files a fingerprint covers: their stat calls cost a compile tens of milliseconds.
MAX_FILES = 20_000
_QUIET_NS = 2_000_000_000
_MAX_LISTINGS = 10_000

# directory -> ((mtime_ns, ctime_ns, inode), sorted names of its entries)
_Listing = tuple[tuple[int, int, int], tuple[str, ...]]
_listings: dict[str, _Listing] = {}


def directory(entry: str | os.PathLike[str]) -> str:
    """Return an include_dirs entry as an absolute path, without touching the disk.

    NVRTC gets the same string as the fingerprint, so both see the same files whatever
    symlinks lie on the way; Path.resolve() would cost an lstat per path component.
    """
    return os.path.abspath(os.path.expanduser(os.fspath(entry)))


def fingerprint(root: str) -> bytes | None:
    """Return the SHA-256 of (relative path, size, mtime, ctime) of every file under root,
    or None when there are more than MAX_FILES of them.

    Raises NotADirectoryError when root is not a directory.
    """
    try:
        root_stat = os.stat(root)
    except OSError:
        root_stat = None
    if root_stat is None or not stat_module.S_ISDIR(root_stat.st_mode):
        raise NotADirectoryError(root)
    digest = hashlib.sha256()
    for count, (relative, info) in enumerate(_files(root, root_stat, time.time_ns()), 1):
        if count > MAX_FILES:
            return None
        line = f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\n"
        digest.update(line.encode(errors="surrogateescape"))
    return digest.digest()


def _files(root: str, root_stat: os.stat_result, now: int) -> Iterator[tuple[str, os.stat_result]]:
    """Yield (relative path, stat) of each file under root, in a fixed order, through
    symlinks: sorted by name, each directory's files before its subdirectories, and each
    directory once."""
    walked: set[tuple[int, int]] = set()
    pending = [("", root, root_stat)]
    while pending:
        prefix, path, path_stat = pending.pop()
        identity = (path_stat.st_dev, path_stat.st_ino)
        if identity in walked:  # a second link to it, or a link loop
            continue
        walked.add(identity)
        subdirectories = []
        for name in _names(path, path_stat, now):
            entry = os.path.join(path, name)
            try:
                info = os.stat(entry)
            except OSError:  # gone since the listing, or a broken symlink
                continue
            if stat_module.S_ISDIR(info.st_mode):
                subdirectories.append((f"{prefix}{name}/", entry, info))
            else:
                yield prefix + name, info
        pending.extend(reversed(subdirectories))


def _names(path: str, path_stat: os.stat_result, now: int) -> tuple[str, ...]:
    """Return the sorted entry names of a directory, kept while the directory is unchanged."""
    signature = (path_stat.st_mtime_ns, path_stat.st_ctime_ns, path_stat.st_ino)
    kept = _listings.get(path)
    if kept is not None and kept[0] == signature:
        return kept[1]
    try:
        with os.scandir(path) as entries:
            names = tuple(sorted(entry.name for entry in entries))
    except OSError:  # unreadable: keyed as empty, as os.walk skips it
        return ()
    if now - max(signature[0], signature[1]) > _QUIET_NS:
        if len(_listings) >= _MAX_LISTINGS:
            _listings.clear()
        _listings[path] = (signature, names)
    return names


def forget() -> None:
    """Drop the kept directory listings, so the next fingerprints read every directory."""
    _listings.clear()
