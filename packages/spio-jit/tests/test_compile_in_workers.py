"""compile_in_workers(): compiles from threads done by worker processes, deaths, fallbacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest
from jit_testkit import SAXPY_SOURCE

import spio.jit as jit
from spio.jit import _workers

_BROKEN = 'extern "C" __global__ void k(float* y) {\n    y[0] = 1.0f\n}\n'


def _source(index: int) -> str:
    return f'extern "C" __global__ void k{index}(float* y) {{ y[0] = {index}.0f; }}\n'


def _compile_in_threads(count: int) -> dict[int, jit.CompiledCode]:
    codes: dict[int, jit.CompiledCode] = {}

    def one(index: int) -> None:
        codes[index] = jit.compile(_source(index), arch="sm_90", cache=False)

    threads = [threading.Thread(target=one, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


def test_threads_compile_in_workers_the_same_code() -> None:
    with jit.compile_in_workers(2):
        pool = _workers._pool
        assert pool is not None
        assert pool.started == 0
        codes = _compile_in_threads(4)
        assert pool.started == 2
        workers = list(pool.idle)
    assert _workers._pool is None
    assert all(worker.process.poll() is not None for worker in workers)  # ended with the block
    for index, code in codes.items():
        alone = jit.compile(_source(index), arch="sm_90", cache=False)
        assert code.code == alone.code
        assert code.lowered_names == alone.lowered_names


def test_compile_error_and_cache_as_outside() -> None:
    with jit.compile_in_workers(2):
        with pytest.raises(jit.CompileError) as inside:
            jit.compile(_BROKEN, arch="sm_80", name="broken.cu")
        stored = jit.compile(SAXPY_SOURCE, arch="sm_80")
    with pytest.raises(jit.CompileError) as outside:
        jit.compile(_BROKEN, arch="sm_80", name="broken.cu")
    assert inside.value.log == outside.value.log
    assert str(inside.value) == str(outside.value)
    assert not stored.from_cache
    again = jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert again.from_cache
    assert again.code == stored.code


def test_a_killed_worker_is_replaced() -> None:
    with jit.compile_in_workers(2):
        jit.compile(_source(1), arch="sm_90", cache=False)
        pool = _workers._pool
        assert pool is not None
        (worker,) = pool.idle
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.wait()
        code = jit.compile(_source(2), arch="sm_90", cache=False)
        assert pool.started == 1
        assert pool.idle[0] is not worker
    assert code.code == jit.compile(_source(2), arch="sm_90", cache=False).code


def test_a_request_whose_workers_die_twice_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    started = []

    def dies(self: _workers._Worker, pickled: bytes) -> None:
        started.append(self)
        self.process.kill()
        return None

    monkeypatch.setattr(_workers._Worker, "compile", dies)
    with jit.compile_in_workers(2):
        with pytest.raises(jit.SpioJitError, match=r"died \(killed by SIGKILL\), and so did"):
            jit.compile(_source(3), arch="sm_90", cache=False)
        assert _workers._pool is not None
        assert _workers._pool.started == 0
    assert len(started) == 2
    assert all(worker.process.poll() is not None for worker in started)


def test_workers_that_cannot_start_leave_compiles_to_the_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_workers, "BOOT", "import sys; sys.exit(3)")
    with jit.compile_in_workers(2):
        with pytest.warns(RuntimeWarning, match=r"could not start \(exit status 3"):
            code = jit.compile(_source(4), arch="sm_90", cache=False)
        assert _workers._pool is not None
        assert _workers._pool.unusable
        jit.compile(_source(5), arch="sm_90", cache=False)  # no second warning
    assert code.code == jit.compile(_source(4), arch="sm_90", cache=False).code


def test_no_interpreter_to_start_leaves_compiles_to_the_threads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path) + "/no-python")
    with jit.compile_in_workers(2):
        with pytest.warns(RuntimeWarning, match="could not start .*FileNotFoundError"):
            code = jit.compile(_source(6), arch="sm_90", cache=False)
        assert _workers._pool is not None
        assert _workers._pool.started == 0
    assert code.code == jit.compile(_source(6), arch="sm_90", cache=False).code


def test_ctrl_c_while_waiting_stops_that_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C reaches the waiting thread once the request is sent: the worker's state is
    # unknown, so it is stopped, not kept.
    real_read = _workers.read_message
    workers = []

    def interrupted(stream: object) -> bytes | None:
        message = real_read(stream)  # type: ignore[arg-type]
        if message != _workers.READY:
            raise KeyboardInterrupt
        return message

    real_worker = _workers._Worker

    def recorded() -> _workers._Worker:
        workers.append(real_worker())
        return workers[-1]

    monkeypatch.setattr(_workers, "read_message", interrupted)
    monkeypatch.setattr(_workers, "_Worker", recorded)
    with jit.compile_in_workers(2):
        with pytest.raises(KeyboardInterrupt):
            jit.compile(_source(7), arch="sm_90", cache=False)
        assert _workers._pool is not None
        assert _workers._pool.started == 0
        assert _workers._pool.idle == []
    assert len(workers) == 1
    assert workers[0].process.poll() is not None


def test_one_worker_and_nested_blocks() -> None:
    with jit.compile_in_workers(1):
        assert _workers._pool is None  # 1: the calling threads compile, as outside
    with jit.compile_in_workers(3):
        outer = _workers._pool
        with jit.compile_in_workers(2):
            assert _workers._pool is outer
        assert _workers._pool is outer
    assert _workers._pool is None


@pytest.mark.parametrize(
    ("workers", "error", "message"),
    [("4", TypeError, "positive int or None"), (0, ValueError, "positive int")],
)
def test_bad_workers(workers: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message), jit.compile_in_workers(workers):  # type: ignore[arg-type]
        pass


def test_an_unguarded_script_is_not_run_again(tmp_path: object) -> None:
    # Workers are fresh interpreters, not spawned copies of the caller's main module.
    script = textwrap.dedent(
        """
        import threading
        import spio.jit as jit
        print("top level ran", flush=True)
        def one(index):
            jit.compile('extern "C" __global__ void k%d() {}' % index, arch="sm_80", cache=False)
        with jit.compile_in_workers(2):
            threads = [threading.Thread(target=one, args=(i,)) for i in range(3)]
            [thread.start() for thread in threads]
            [thread.join() for thread in threads]
        print("done", flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.splitlines() == ["top level ran", "done"]
