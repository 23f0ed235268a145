"""GPU tier of the device headers: each test module here is marked gpu and needs CUDA torch.

tests/conftest.py puts tests/ on sys.path (for _nvrtc); this folder goes there too, for the
launch helper _launch.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
