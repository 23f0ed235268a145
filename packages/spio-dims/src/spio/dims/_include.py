"""Where the header-only C++ library lives in the installed package."""

from __future__ import annotations

import functools
from pathlib import Path


# Cached: compile keys hash this path on every spio.jit.compile, and resolve() costs an
# lstat per path component.
@functools.cache
def include_dir() -> Path:
    """Return the directory to pass as `-I` so that `#include "spio/spio.h"` resolves.

    The headers ship inside the package (`spio/dims/include/spio/*.h`), so this is the
    installed copy whatever the install method (wheel, editable, source tree).
    """
    return Path(__file__).resolve().parent / "include"
