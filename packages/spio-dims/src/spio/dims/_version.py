"""The distribution's version, read from its installed metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spio-dims")
except PackageNotFoundError:  # a source tree on sys.path without an install
    __version__ = "0+unknown"
