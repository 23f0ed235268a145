"""Where the header-only C++ library lives in the installed package."""

from __future__ import annotations

from pathlib import Path


def include_dir() -> Path:
    """Return the directory to pass as `-I` so that `#include "spio/spio.h"` resolves.

    The headers ship inside the package (`spio/dims/include/spio/*.h`), so this is the
    installed copy whatever the install method (wheel, editable, source tree).
    """
    return Path(__file__).resolve().parent / "include"
