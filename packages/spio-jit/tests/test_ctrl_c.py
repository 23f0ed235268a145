"""Ctrl-C deferred to safe points while a worker pool runs (_ctrl_c).

Each scenario runs in a fresh interpreter: a process-directed signal goes to any thread that
does not block it, and threads left by other tests would take it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

_PRELUDE = """
import os, signal, threading, time
from spio.jit._ctrl_c import deferred_ctrl_c, sigint_blocked

def wait_until(predicate, timeout_s=10.0):
    # Python runs signal handlers in the main thread between bytecodes; sleep lets them in.
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.001)
    return predicate()
"""


def _run(body: str) -> str:
    script = _PRELUDE + textwrap.dedent(body)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@posix_only
def test_sigint_is_recorded_not_raised_and_the_handler_comes_back() -> None:
    out = _run(
        """
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with deferred_ctrl_c() as ctrl_c:
            assert not ctrl_c.pressed
            os.kill(os.getpid(), signal.SIGINT)
            assert wait_until(lambda: ctrl_c.pressed)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            print("raised after the block")
        """
    )
    assert out.strip() == "raised after the block"


@posix_only
def test_a_handler_the_program_installed_stays_in_charge() -> None:
    out = _run(
        """
        calls = []
        signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
        with deferred_ctrl_c() as ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)
            assert wait_until(lambda: calls)
        print(calls == [signal.SIGINT], ctrl_c.pressed)
        """
    )
    assert out.strip() == "True False"


def test_outside_the_main_thread_nothing_changes() -> None:
    out = _run(
        """
        seen = []
        def body():
            with deferred_ctrl_c() as ctrl_c:
                seen.append(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
                seen.append(ctrl_c.pressed)
        thread = threading.Thread(target=body)
        thread.start()
        thread.join()
        print(seen)
        """
    )
    assert out.strip() == "[True, False]"


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_sigmask"), reason="pthread_sigmask")
def test_a_sigint_blocked_meanwhile_arrives_when_the_block_ends() -> None:
    out = _run(
        """
        with deferred_ctrl_c() as ctrl_c:
            with sigint_blocked():
                assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                print("pending:", not ctrl_c.pressed)
            assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
            print("arrived:", wait_until(lambda: ctrl_c.pressed))
        """
    )
    assert out.split() == ["pending:", "True", "arrived:", "True"]
