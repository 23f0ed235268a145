"""cuda.core, imported once under a lock, for code that may first run on several threads.

cuda-core 1.2's `cuda/core/__init__.py` first copies its versioned submodule's namespace
(`cuda.core.cu13`, `__spec__` included) into its own, then spends about half a second
importing the names it exports. From the copy on, the package's spec says it is initialized,
so a second thread's `from cuda.core import ObjectCode` in that half second does not wait
for the first import: it finds the name missing and raises ImportError ("cannot import name
'ObjectCode' from 'cuda.core.cu13'"). Spio's loads are lazy and may first run in a thread
pool (spio.torch.precompile loads a model's kernels in threads), so every import of cuda.core
in spio.jit goes through `cuda_core()`: the first one holds the lock until the package is
whole, later ones find it done.
"""

from __future__ import annotations

import threading
from types import ModuleType

_lock = threading.Lock()
_module: ModuleType | None = None


def cuda_core() -> ModuleType:
    """The cuda.core package, whole (its first import finished, under _lock)."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                import cuda.core

                _module = cuda.core
    return _module
