"""cuda.core imported from many threads at once (no GPU: importing cuda.core needs none)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("cuda.core")

# Threads that first reach cuda.core one after another while its import runs (about half a
# second): with cuda-core 1.2.2, a plain `from cuda.core import ObjectCode` failed in 37-38 of
# 40 such threads, since the package says it is initialized before it has its names.
_THREADS = textwrap.dedent(
    """
    import sys, threading, time
    from spio.jit._cuda_core import cuda_core

    assert "cuda.core" not in sys.modules
    failures = []

    def first_use(i):
        time.sleep(i * 0.01)
        try:
            cuda_core().ObjectCode
            from cuda.core.utils import StridedMemoryView  # what spio.jit._args imports next
        except Exception as error:  # (any, to be counted)
            failures.append(repr(error))

    threads = [threading.Thread(target=first_use, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(len(failures), failures[:1])
    """
)


def test_threads_that_first_use_cuda_core_during_its_import_all_get_it_whole() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _THREADS], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []"


def test_spio_jit_imports_cuda_core_only_through_the_locked_import() -> None:
    """Every first use of cuda.core in spio.jit's sources goes through cuda_core(): a plain
    `from cuda.core import X` there could run first on a thread during another's import."""
    from pathlib import Path

    import spio.jit

    sources = Path(spio.jit.__file__).parent.glob("*.py")
    plain = [
        f"{path.name}:{number}"
        for path in sources
        if path.name != "_cuda_core.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.strip().startswith(("from cuda.core import", "import cuda.core"))
    ]
    assert plain == []
