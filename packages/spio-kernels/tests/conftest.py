"""Makes the helpers every kernel family's tests share (sanitizer_summary) importable."""

import sys
from pathlib import Path

# pytest's importlib mode does not put the tests' folder on sys.path.
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
