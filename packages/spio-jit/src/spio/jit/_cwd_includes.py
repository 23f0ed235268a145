"""Files on disk that in-memory headers include: part of the compile cache key.

NVRTC places the in-memory headers (compile's headers=) in the process's current directory:
a quoted #include in one of them is looked for first beside it, relative to the current
directory ("lib/x.h" including "y.h" finds ./lib/y.h), and only then in the include
directories. A file found there decides what compiles, so its path, size and times join the
key, with the files it includes beside itself in turn. Where none exists, the usual case, a
compile pays one stat per distinct quoted include; the scan of a header's text is kept per
text.

An include inside a comment or a false #if counts too: that only makes the key depend on a
file that does not change the output.
"""

from __future__ import annotations

import functools
import os
import re
import stat as stat_module
from collections.abc import Sequence

_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _quoted_includes(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_QUOTED_INCLUDE.findall(text)))


@functools.lru_cache(maxsize=64)
def _quoted_includes_of_file(path: str, signature: tuple[int, int, int]) -> tuple[str, ...]:
    """The quoted includes of a file on disk, kept per (inode, size, mtime) of the file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return _quoted_includes(file.read())
    except OSError:
        return ()


def found(headers: Sequence[tuple[str, str]]) -> list[tuple[str, os.stat_result]]:
    """Return (absolute path, stat) of each file on disk that a quoted include of the
    in-memory headers, given as (name, text), finds beside them (see the module doc), and
    of each file those include beside themselves; sorted by path."""
    in_memory = {name for name, _ in headers}
    seen: dict[str, os.stat_result] = {}
    pending = [(os.path.dirname(name), _quoted_includes(text)) for name, text in headers]
    while pending:
        directory, includes = pending.pop()
        for include in includes:
            if include in in_memory:  # NVRTC takes an in-memory header by its name first
                continue
            path = os.path.join(directory, include)  # as NVRTC opens it
            if path in seen:
                continue
            try:
                info = os.stat(path)
            except OSError:  # the usual case: nothing there
                continue
            if not stat_module.S_ISREG(info.st_mode):
                continue
            seen[path] = info
            signature = (info.st_ino, info.st_size, info.st_mtime_ns)
            pending.append((os.path.dirname(path), _quoted_includes_of_file(path, signature)))
    # Keyed by absolute path: the same name in another directory is another file.
    return sorted((_absolute(path), info) for path, info in seen.items())


def _absolute(path: str) -> str:
    try:
        return os.path.abspath(path)
    except OSError:  # the current directory was removed
        return path
