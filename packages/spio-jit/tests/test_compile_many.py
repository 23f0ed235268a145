"""compile_many(): variants in worker processes, partial failure, cache hits, Ctrl-C."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent import futures
from pathlib import Path
from types import SimpleNamespace

import pytest
from jit_testkit import (
    SAXPY_SOURCE,
    TENSOR_CORE_SOURCE,
    TILE_HEADERS,
    KillerAfter,
    SigtermSleeper,
    WorkerKiller,
    ignore_sigterm_in_a_task,
    set_ready_event,
    sleep_through_sigterm,
)

import spio.jit as jit
from spio.jit import CompileRequest

_BROKEN = 'extern "C" __global__ void k(float* y) {\n    y[0] = 1.0f\n}\n'


def _variants() -> dict[str, CompileRequest]:
    return {
        "sm80": CompileRequest(SAXPY_SOURCE, arch="sm_80"),
        "broken": CompileRequest(_BROKEN, arch="sm_80", name="broken.cu"),
        "sm90-mma": CompileRequest(
            TENSOR_CORE_SOURCE,
            headers=TILE_HEADERS,
            arch="sm_90",
            name_expressions=("tile_mma<float, 1>",),
        ),
    }


def test_failing_variant_is_named_and_the_others_complete() -> None:
    with pytest.raises(jit.CompileManyError) as caught:
        jit.compile_many(_variants(), workers=2, progress=False)
    error = caught.value
    assert set(error.results) == {"sm80", "sm90-mma"}
    assert set(error.errors) == {"broken"}
    assert isinstance(error.errors["broken"], jit.CompileError)
    assert "broken.cu(3)" in str(error.errors["broken"])
    message = str(error)
    assert "1 of 3 variants failed" in message
    assert "variant 'broken'" in message
    assert error.results["sm90-mma"].lowered_names == {
        "tile_mma<float, 1>": "_Z8tile_mmaIfLi1EEvPK6__halfS2_PT_"
    }
    # The compiled variants went to the cache: a second run reads them in this process.
    again = jit.compile_many(
        {k: v for k, v in _variants().items() if k != "broken"}, workers=2, progress=False
    )
    assert all(code.from_cache for code in again.values())
    assert again["sm80"].code == error.results["sm80"].code


def test_in_process_with_one_worker_and_an_iterable_keyed_by_position() -> None:
    requests = [CompileRequest(SAXPY_SOURCE, arch=arch) for arch in ("sm_80", "sm_86")]
    results = jit.compile_many(requests, workers=1, progress=False)
    assert list(results) == [0, 1]
    assert [code.arch for code in results.values()] == ["sm_80", "sm_86"]


def test_workers_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPIO_JIT_WORKERS", "1")
    results = jit.compile_many([CompileRequest(SAXPY_SOURCE, arch="sm_89")], progress=False)
    assert results[0].arch == "sm_89"
    monkeypatch.setenv("SPIO_JIT_WORKERS", "zero")
    with pytest.raises(ValueError, match="SPIO_JIT_WORKERS"):
        jit.compile_many([CompileRequest(SAXPY_SOURCE, arch="sm_89")], progress=False)


def test_invalid_request_is_reported_per_variant() -> None:
    requests = {
        "good": CompileRequest(SAXPY_SOURCE, arch="sm_80"),
        "bad-arch": CompileRequest(SAXPY_SOURCE, arch="sm_99"),
    }
    with pytest.raises(jit.CompileManyError) as caught:
        jit.compile_many(requests, workers=2, progress=False)
    assert set(caught.value.results) == {"good"}
    assert isinstance(caught.value.errors["bad-arch"], ValueError)


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="not a CompileRequest"):
        jit.compile_many([SAXPY_SOURCE])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="workers"):
        jit.compile_many([], workers=0)


def test_compile_many_error_pickles() -> None:
    with pytest.raises(jit.CompileManyError) as caught:
        jit.compile_many(_variants(), workers=1, progress=False)
    copy = pickle.loads(pickle.dumps(caught.value))
    assert set(copy.errors) == {"broken"}
    assert str(copy) == str(caught.value)


def _script_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a script run in a subprocess: a cache of its own under tmp_path, and
    this process's import path with the test kit on it."""
    return {
        **os.environ,
        "SPIO_JIT_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path]),
    }


_INTERRUPTED_SCRIPT = textwrap.dedent(
    """
    import faulthandler
    import multiprocessing
    import signal
    import sys

    import spio.jit as jit
    from jit_testkit import TENSOR_CORE_SOURCE, TILE_HEADERS

    if __name__ == "__main__":
        faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks on a hang
        requests = [
            jit.CompileRequest(
                TENSOR_CORE_SOURCE, headers=TILE_HEADERS, arch="sm_90", defines={"VARIANT": i}
            )
            for i in range(300)
        ]
        print("started", flush=True)
        try:
            jit.compile_many(requests, workers=2, progress=False)
        except KeyboardInterrupt:
            alive = len(multiprocessing.active_children())
            print(f"interrupted; live workers: {alive}", flush=True)
            sys.exit(130)
        print("finished", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to a process group")
@pytest.mark.parametrize("delay_s", [0.3, 2.5], ids=["while-workers-start", "while-compiling"])
def test_ctrl_c_stops_the_pool_without_hanging(tmp_path: Path, delay_s: float) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(_INTERRUPTED_SCRIPT)
    env = _script_env(tmp_path)
    process = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, like a terminal's foreground job
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "started"
    time.sleep(delay_s)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)  # every thread's stack, to stderr
        time.sleep(2)
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"compile_many did not stop within 60 s of Ctrl-C:\n{stdout}\n{stderr}")
    assert process.returncode == 130, stderr
    assert "interrupted; live workers: 0" in stdout


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
# The pool's manager thread must not fail either (InvalidStateError, where it set a stopped
# pool's cancelled futures' exceptions).
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_ctrl_c_inside_futures_wait_is_noticed_by_the_loop_not_raised_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The CI hang: KeyboardInterrupt raised between two bytecodes inside futures.wait() can
    # leave a future's lock held, and stopping the pool then waits on it forever. A Ctrl-C
    # that arrives inside wait() must only be recorded; compile_many raises it afterwards.
    import concurrent.futures
    import multiprocessing

    real_wait = concurrent.futures.wait
    returned: list[bool] = []

    def wait_hit_by_ctrl_c(*args: object, **kwargs: object) -> object:
        signal.raise_signal(signal.SIGINT)  # runs the Python-level handler right here
        returned.append(True)
        return real_wait(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrent.futures, "wait", wait_hit_by_ctrl_c)
    requests = [CompileRequest(SAXPY_SOURCE, arch="sm_80", defines={"V": i}) for i in range(6)]
    with pytest.raises(KeyboardInterrupt):
        jit.compile_many(requests, workers=2, progress=False, cache=False)
    assert returned == [True]  # wait() ran to its end; the loop raised
    assert multiprocessing.active_children() == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_arguments_name_what_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: cache="no" used the cache (compile refuses it), progress="no" showed the
    bar, and a lone CompileRequest gave "'CompileRequest' object is not iterable"."""
    request = CompileRequest(SAXPY_SOURCE, arch="sm_80")
    with pytest.raises(TypeError, match="cache must be True or False, got 'no'"):
        jit.compile_many([request], cache="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cache must be True or False, got None"):
        jit.compile_many([request], cache=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="progress must be True, False or None, got 'no'"):
        jit.compile_many([request], progress="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got a single CompileRequest; pass \[request\]"):
        jit.compile_many(request)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="requests must be a list or dict of CompileRequests"):
        jit.compile_many(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="workers must be a positive int or None, got '2'"):
        jit.compile_many([request], workers="2")  # type: ignore[arg-type]


def test_a_stderr_without_isatty_gets_no_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a write-only sys.stderr replacement raised AttributeError."""

    class WriteOnly:
        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stderr", WriteOnly())
    results = jit.compile_many([CompileRequest(SAXPY_SOURCE, arch="sm_80")], workers=1)
    assert results[0].cubin


def test_identical_requests_are_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: each of several identical requests was compiled (with the cache, they
    queued on its lock instead)."""
    from spio.jit import _nvrtc

    calls: list[str] = []
    compile_program = _nvrtc.compile_program

    def counted(*args: object) -> object:
        calls.append(str(args[1]))
        return compile_program(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_nvrtc, "compile_program", counted)
    requests = {name: CompileRequest(SAXPY_SOURCE, arch="sm_80") for name in "abc"}
    requests["other"] = CompileRequest(SAXPY_SOURCE, arch="sm_86")
    results = jit.compile_many(requests, workers=1, progress=False, cache=False)
    assert list(results) == ["a", "b", "c", "other"]
    assert len(calls) == 2
    assert results["a"].code == results["b"].code == results["c"].code
    broken = {name: CompileRequest(_BROKEN, arch="sm_80") for name in "xy"}
    with pytest.raises(jit.CompileManyError) as caught:
        jit.compile_many(broken, workers=1, progress=False, cache=False)
    assert set(caught.value.errors) == {"x", "y"}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_worker_that_dies_fails_only_its_own_variant() -> None:
    """Regression: one worker dying (NVRTC crashing on a variant, the OOM killer) broke the
    pool, and every variant, queued ones too, was reported as failed to compile."""
    requests = {
        "ok0": CompileRequest(SAXPY_SOURCE, arch="sm_80", defines={"V": 0}),
        "killer": CompileRequest(WorkerKiller(SAXPY_SOURCE), arch="sm_80"),
        **{f"ok{i}": CompileRequest(SAXPY_SOURCE, arch="sm_80", defines={"V": i}) for i in (1, 2)},
    }
    with pytest.raises(jit.CompileManyError) as caught:
        jit.compile_many(requests, workers=2, progress=False)
    error = caught.value
    assert set(error.results) == {"ok0", "ok1", "ok2"}
    assert set(error.errors) == {"killer"}
    assert str(error.errors["killer"]).startswith(
        "the worker process compiling this variant died (killed by SIGKILL), and again when "
        "the variant was compiled alone (killed by SIGKILL)"
    )


_ORPHAN_SCRIPT = textwrap.dedent(
    """
    import spio.jit as jit
    from jit_testkit import SAXPY_SOURCE

    if __name__ == "__main__":
        requests = [
            jit.CompileRequest(SAXPY_SOURCE, arch="sm_80", defines={"V": i}) for i in range(3000)
        ]
        jit.compile_many(requests, workers=2, progress=False, cache=False)
    """
)


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name: state, ppid, ..."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if len(fields) > 1 and fields[1] == str(pid):
                found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_workers_exit_when_the_caller_is_killed(tmp_path: Path, signum: int) -> None:
    """Regression: a caller killed during compile_many (SIGKILL, SIGTERM, the OOM killer)
    left its workers and the resource tracker running forever, about 130 MB each."""
    script = tmp_path / "caller.py"
    script.write_text(_ORPHAN_SCRIPT)
    env = _script_env(tmp_path)
    caller = subprocess.Popen([sys.executable, str(script)], env=env)
    children: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(children) < 3 and time.monotonic() < deadline:  # 2 workers, the tracker
            time.sleep(0.1)
            children = _children(caller.pid)
        assert len(children) >= 3, f"the caller started {children}"
        time.sleep(1.0)  # the workers are compiling
        os.kill(caller.pid, signum)
        caller.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(_running(child) for child in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [child for child in children if _running(child)] == []
    finally:
        for pid in [caller.pid, *children]:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


_UNGUARDED_SCRIPT = textwrap.dedent(
    """
    import spio.jit as jit
    from jit_testkit import SAXPY_SOURCE

    # No `if __name__ == "__main__":` guard: each spawned worker runs these lines again.
    requests = [jit.CompileRequest(SAXPY_SOURCE, arch="sm_80", defines={"V": i}) for i in range(4)]
    try:
        jit.compile_many(requests, workers=2, progress=False)
    except jit.CompileManyError as error:
        print("ERROR", error.errors[0])
    """
)


def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path: Path) -> None:
    """Regression: the variants failed with "out of memory, or killed from outside", where
    every worker had died on multiprocessing's refusal to start a pool while it imported the
    unguarded script."""
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED_SCRIPT)
    env = _script_env(tmp_path)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    errors = [line for line in result.stdout.splitlines() if line.startswith("ERROR ")]
    assert errors, (result.stdout, result.stderr)
    assert "they exited with status 1 as they started" in errors[0]
    assert 'guard the call with `if __name__ == "__main__":`' in errors[0]
    assert "out of memory" not in errors[0]


@pytest.mark.parametrize(
    ("exit_codes", "expected"),
    [
        ([1, -signal.SIGTERM], 'guard the call with `if __name__ == "__main__":`'),
        ([1, 1], "they exited with status 1 as they started"),
        ([-signal.SIGKILL, -signal.SIGTERM], "(killed by SIGKILL, killed by SIGTERM): out of"),
        ([1, -signal.SIGKILL], "(exit status 1, killed by SIGKILL): out of memory"),
        ([], "(their exit statuses unknown): out of memory, or killed from outside"),
    ],
)
def test_variants_no_worker_started_say_why_from_the_exit_codes(
    exit_codes: list[int], expected: str
) -> None:
    from spio.jit import _pool

    message = _pool._not_started(exit_codes)
    assert message.startswith(
        "not compiled: worker processes kept dying before they started this variant, in 2 "
        "fresh pools"
    )
    assert expected in message


def test_a_stopped_pool_returns_once_every_worker_has_exited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: after Ctrl-C, a worker could still run when compile_many had returned (the
    pool's shutdown joins its workers only while its manager thread runs); now each is
    joined, and killed where SIGTERM did not end it."""
    from spio.jit import _pool

    monkeypatch.setattr(_pool, "_JOIN_S", 0.5)
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    worker = context.Process(target=sleep_through_sigterm, args=(ready,))
    worker.start()
    try:
        assert ready.wait(60)

        # A pool whose manager thread had ended: its shutdown joins nothing.
        ended_pool = SimpleNamespace(
            _processes={worker.pid: worker}, shutdown=lambda wait=True, cancel_futures=False: None
        )
        _pool._stop(ended_pool, [])  # type: ignore[arg-type]
        assert not worker.is_alive()
        assert worker.exitcode == -signal.SIGKILL
    finally:
        if worker.is_alive():
            worker.kill()


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_stopping_a_pool_whose_worker_outlives_sigterm_does_not_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression (CI, cu12): after Ctrl-C, compile_many hung for good. A worker hit by
    SIGTERM inside NVRTC 12's initialization deadlocked in exit() (NVRTC's handler calls it,
    and the C library's atexit lock was held), and the pool's shutdown joined it without a
    timeout before any kill. Now the workers are joined, and killed, before the shutdown."""
    from spio.jit import _pool

    monkeypatch.setattr(_pool, "_JOIN_S", 0.5)
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    executor = futures.ProcessPoolExecutor(
        1, mp_context=context, initializer=set_ready_event, initargs=(ready,)
    )
    work = executor.submit(ignore_sigterm_in_a_task)
    processes = list(executor._processes.values())  # type: ignore[attr-defined]
    try:
        assert ready.wait(60)
        stopper = threading.Thread(target=_pool._stop, args=(executor, [work]), daemon=True)
        stopper.start()
        stopper.join(30)
        assert not stopper.is_alive(), "stopping the pool hung on a worker SIGTERM left alive"
        assert all(not process.is_alive() for process in processes)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()


def test_a_broken_pool_whose_worker_outlives_sigterm_does_not_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a pool broken by a worker's death SIGTERMs the workers left, and its
    shutdown joined them without a timeout, so one that SIGTERM left alive (NVRTC 12's
    handler deadlocked in exit()) hung compile_many. Now such a worker is killed, and its
    variant compiled again in the next pool."""
    from spio.jit import _pool

    monkeypatch.setattr(_pool, "_JOIN_S", 0.5)
    marker = tmp_path / "slept"
    # One worker sleeps through SIGTERM; the other compiles "quick", whose result has the
    # pool's manager thread watch both workers again (in Python 3.11 it watches only the
    # workers there were when it last began waiting), then dies on "killer" once the
    # sleeper sleeps.
    requests = {
        "sleeper": CompileRequest(SigtermSleeper(str(marker)), arch="sm_80"),
        "quick": CompileRequest(SAXPY_SOURCE, arch="sm_80", defines={"Q": 1}),
        "killer": CompileRequest(KillerAfter(str(marker)), arch="sm_80", defines={"K": 1}),
    }
    outcome: list[BaseException] = []

    def compile_them() -> None:
        try:
            jit.compile_many(requests, workers=2, progress=False, cache=False)
        except BaseException as error:
            outcome.append(error)

    runner = threading.Thread(target=compile_them, daemon=True)
    runner.start()
    runner.join(40)  # the sleeper sleeps 60 s: without the kill, compile_many waits it out
    try:
        assert not runner.is_alive(), "compile_many hung on a worker SIGTERM left alive"
        assert marker.exists()
        (error,) = outcome
        assert isinstance(error, jit.CompileManyError)
        assert set(error.results) == {"sleeper", "quick"}
        assert set(error.errors) == {"killer"}
    finally:
        for child in multiprocessing.active_children():
            child.kill()
