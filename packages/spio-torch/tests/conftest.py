"""Shared setup of spio-torch's tests."""

from __future__ import annotations

import sys
from pathlib import Path

# tests/ holds conv2d_cases.py; pytest's importlib mode does not put it on sys.path.
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
