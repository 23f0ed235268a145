"""compile_in_workers(): compile() from many threads, with NVRTC in worker processes.

NVRTC's compiles in one process do not run side by side past a few threads. On a 16-core
H100 host (2026-12-06; conv2d_gw8 fprop kernels, 0.49 s each alone), 32 compiles took 15.8 s
in one thread, 5.0 s in 4 threads, 5.3 s in 8 and 5.5 s in 16 (each compile then took
2.05 s), and 1.7 s in compile_many's 16 worker processes. A caller whose compiles come from
many threads, each choosing its next compile from what the last one gave (spio.torch's
precompile: a launcher reads a kernel's registers before it picks the next variant), cannot
hand them to compile_many as one batch. Inside compile_in_workers, each compile() of the
process that misses the disk cache has NVRTC's part done by a worker process while the
calling thread waits; the cache look-up, the key's lock and the stored entry stay with the
caller, as outside.

A worker (_compile_worker) is a fresh interpreter started by subprocess, not by
multiprocessing, so it imports spio.jit alone and never the caller's main module: a script
that compiles at its top level without a main guard does not run again in each worker.
Workers start as compiles need them, up to the block's count, and compile one request at a
time, so a worker that dies (NVRTC crashed, the OOM killer) died on that request: the request
is compiled once more in a new worker and fails with SpioJitError if that one dies too. A
worker that cannot start at all (it ends before saying it is ready) turns the block's
compiles back into the calling threads', with a warning. Workers run in their own session,
out of reach of a terminal's Ctrl-C, and each exits when its stdin closes: at the block's
end, or when the parent dies.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, cast

from spio.jit._compile_worker import BOOT, READY, read_message, write_message
from spio.jit._errors import SpioJitError
from spio.jit._exit_status import describe_exit

if TYPE_CHECKING:
    from spio.jit._compile import CompiledCode, _Prepared

#: How long a worker whose stdin was closed may take to exit before it is killed.
_STOP_S = 5.0


class _CannotStartError(Exception):
    """A worker process ended before it was ready (its stderr says why)."""


class _Worker:
    """One worker process and its two pipes; used by one thread at a time."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", BOOT, json.dumps([p for p in sys.path if isinstance(p, str)])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
        self.ready = False

    def compile(self, pickled: bytes) -> tuple[str, Any] | None:
        """The worker's answer to one pickled request, or None where it died first;
        _CannotStartError where it ended before it was ready."""
        stdin, stdout = cast(IO[bytes], self.process.stdin), cast(IO[bytes], self.process.stdout)
        if not self.ready:
            if read_message(stdout) != READY:
                raise _CannotStartError(self.death())
            self.ready = True
        try:
            write_message(stdin, pickled)
        except OSError:  # (BrokenPipeError: it died between requests)
            return None
        answer = read_message(stdout)
        return None if answer is None else pickle.loads(answer)

    def death(self) -> str:
        """How the process ended (it has closed its stdout, so it is ending)."""
        try:
            code = self.process.wait(_STOP_S)
        except subprocess.TimeoutExpired:
            return "it closed its output but did not exit"
        return describe_exit(code)

    def stop(self) -> None:
        """End the process: its stdin closed, then killed if it does not exit."""
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(_STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class _Pool:
    """Up to `size` workers, started as compiles need them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.idle: list[_Worker] = []
        self.started = 0
        self.closed = False
        self.unusable = False
        self.changed = threading.Condition()

    def _take(self) -> _Worker | None:
        """An idle worker, or a new one, waiting while all are busy; None once the pool is
        closed or its workers cannot start."""
        with self.changed:
            while True:
                if self.closed or self.unusable:
                    return None
                if self.idle:
                    return self.idle.pop()
                if self.started < self.size:
                    self.started += 1
                    break
                self.changed.wait()
        try:
            return _Worker()
        except OSError as error:  # (no interpreter at sys.executable, no processes left)
            self._give_back(None, alive=False)
            self._cannot_start(f"{type(error).__name__}: {error}")
            return None
        except BaseException:
            self._give_back(None, alive=False)
            raise

    def _give_back(self, worker: _Worker | None, alive: bool) -> None:
        with self.changed:
            keep = worker is not None and alive and not self.closed
            if worker is not None and keep:
                self.idle.append(worker)
            else:
                self.started -= 1
            self.changed.notify()
        if worker is not None and not keep:
            worker.stop()

    def compile(self, prepared: _Prepared) -> CompiledCode | None:
        """prepared compiled by a worker, or None where the calling thread must compile it
        (the pool closed, or no worker can start)."""
        pickled = pickle.dumps(prepared)
        deaths: list[str] = []
        while len(deaths) < 2:
            worker = self._take()
            if worker is None:
                return None
            try:
                answer = worker.compile(pickled)
            except _CannotStartError as failure:
                self._give_back(worker, alive=False)
                self._cannot_start(str(failure))
                return None
            except BaseException:  # (Ctrl-C mid-request: the worker's state is unknown)
                self._give_back(worker, alive=False)
                raise
            if answer is None:
                deaths.append(worker.death())
                self._give_back(worker, alive=False)
                continue
            self._give_back(worker, alive=True)
            kind, value = answer
            if kind == "error":
                raise value
            return value
        raise SpioJitError(
            f"the worker process compiling {prepared.name!r} died ({deaths[0]}), and so did "
            f"a new one given it again ({deaths[1]}): NVRTC may crash on this program, or "
            "the machine ran out of memory"
        )

    def _cannot_start(self, death: str) -> None:
        with self.changed:
            if self.unusable:
                return
            self.unusable = True
            self.changed.notify_all()
        warnings.warn(
            f"spio-jit's compile worker process could not start ({death}; any error of its own "
            f"is on stderr, from {sys.executable}); compiling in this process's threads "
            "instead",
            RuntimeWarning,
            stacklevel=2,
        )

    def close(self) -> None:
        """Stop the idle workers; a busy one stops when its compile ends."""
        with self.changed:
            self.closed = True
            idle, self.idle = self.idle, []
            self.changed.notify_all()
        for worker in idle:
            worker.stop()


_lock = threading.Lock()
_pool: _Pool | None = None
_blocks = 0


@contextlib.contextmanager
def compile_in_workers(workers: int | None = None) -> Iterator[None]:
    """Within the block, run NVRTC in worker processes for every compile of this process
    that misses the disk cache, from whichever thread it comes.

    For compiles from many threads: NVRTC's compiles in one process run side by side in no
    more than about four threads at a time, where worker processes scale with the cores
    (compile_many does so for a batch known up front). Each compile still returns in its
    own thread; the cache and its locks work as outside. Workers start as compiles need
    them and end with the block (nested or concurrent blocks share the first one's workers).

    Args:
        workers: the most worker processes; default SPIO_JIT_WORKERS, else the CPUs this
            process may use. 1 compiles in the calling threads, as outside the block.

    Raises:
        TypeError, ValueError: workers is not a positive int or None.
        SpioJitError (from a compile): its worker process died, and a second one too.
    """
    from spio.jit._compile_many import _cpu_count, _worker_count

    count = _worker_count(workers) or _cpu_count()
    global _pool, _blocks
    with _lock:
        if _pool is None and count > 1 and sys.executable:
            _pool = _Pool(count)
        _blocks += 1
    try:
        yield
    finally:
        with _lock:
            _blocks -= 1
            pool = _pool if _blocks == 0 else None
            if pool is not None:
                _pool = None
        if pool is not None:
            pool.close()


def compiled_by_worker(prepared: _Prepared) -> CompiledCode | None:
    """prepared compiled in a worker process inside compile_in_workers, else None."""
    pool = _pool
    return None if pool is None else pool.compile(prepared)
