"""Where NVIDIA's pip wheels put their files, by CUDA major version.

CUDA 13 wheels share one tree per major (nvidia/cu13/lib, nvidia/cu13/include); CUDA 12
wheels have a tree per component (nvidia/cuda_nvrtc/lib, nvidia/cuda_runtime/include).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def nvidia_dirs() -> list[Path]:
    """Return the directories of the `nvidia` namespace package, in sys.path order."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def component_dir(nvidia: Path, major: int, cu12_component: str) -> Path:
    """Return the tree under one `nvidia` directory that holds a component of this major:
    the major's shared tree from CUDA 13 on, else the component's own (e.g. cuda_nvrtc)."""
    return nvidia / (f"cu{major}" if major >= 13 else cu12_component)


def nvrtc_library(major: int) -> Path | None:
    """Return the first libnvrtc of this major in NVIDIA's wheels (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    for nvidia in nvidia_dirs():
        library = component_dir(nvidia, major, "cuda_nvrtc") / "lib" / f"libnvrtc.so.{major}"
        if library.is_file():
            return library
    return None
