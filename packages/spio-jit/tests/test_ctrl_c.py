"""Ctrl-C deferred to safe points while a worker pool runs (_ctrl_c)."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

from spio.jit._ctrl_c import deferred_ctrl_c, sigint_blocked

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@posix_only
def test_sigint_is_recorded_not_raised_and_the_handler_comes_back() -> None:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with deferred_ctrl_c() as ctrl_c:
        assert not ctrl_c.pressed
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the Python-level handler runs at the next bytecode boundary
            if ctrl_c.pressed:
                break
        assert ctrl_c.pressed
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


@posix_only
def test_a_handler_the_program_installed_stays_in_charge() -> None:
    calls: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    try:
        with deferred_ctrl_c() as ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                if calls:
                    break
        assert calls == [signal.SIGINT]
        assert not ctrl_c.pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_nothing_changes() -> None:
    seen: list[object] = []

    def body() -> None:
        with deferred_ctrl_c() as ctrl_c:
            seen.append(signal.getsignal(signal.SIGINT))
            seen.append(ctrl_c.pressed)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler, False]


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs pthread_sigmask")
def test_a_sigint_blocked_meanwhile_arrives_when_the_block_ends() -> None:
    with deferred_ctrl_c() as ctrl_c:
        with sigint_blocked():
            assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
            assert not ctrl_c.pressed  # pending, not delivered
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
        for _ in range(1000):
            if ctrl_c.pressed:
                break
        assert ctrl_c.pressed
