"""The launch function written per plan (spio.jit._launcher), with recording stand-ins."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spio.jit as jit
from spio.jit._args import ArgError, ArgPacker
from spio.jit._launcher import Replan, write_launcher


def _tensor_type(device: int = 0) -> type:
    return type(
        "FakeTensor",
        (),
        {
            "__module__": "torch.fake",
            "data_ptr": lambda self: 0x1000,
            "get_device": lambda self: device,
        },
    )


class Recorder:
    """Stands in for cuda.core's launch, the stream table and the Kernel's general path."""

    def __init__(self, streams: dict[int, tuple[Any, bool, int | None]]) -> None:
        self.streams = streams
        self.launches: list[tuple[Any, ...]] = []
        self.general: list[tuple[Any, ...]] = []
        self.failed: list[tuple[Any, ...]] = []
        self.refuse = False

    def core_launch(self, stream: Any, config: Any, kernel: Any, *values: Any) -> None:
        if self.refuse:
            raise RuntimeError("refused")
        self.launches.append((stream, config, kernel, values))

    def stream_entry(self, handle: int) -> tuple[Any, bool, int | None]:
        entry = (f"stream {handle:#x}", handle in (0, 1, 2), None)
        self.streams[handle] = entry
        return entry

    def write(self, args: tuple[Any, ...], torch_device: int = 0, stream: int = 0x5000) -> Any:
        packer = ArgPacker("k", 0, None)
        _, framework = packer.pack(args)
        getters = None
        if framework == "torch":
            getters = (lambda device: stream, lambda: torch_device)
        return write_launcher(
            tuple(map(type, args)),
            packer.steps(args),
            device=0,
            framework=framework,
            torch_getters=getters,
            config="config",
            core_kernel="kernel",
            core_launch=self.core_launch,
            streams_get=self.streams.get,
            stream_entry=self.stream_entry,
            general=lambda *call: self.general.append(call),
            failed=lambda *call: self.failed.append(call),
        )


def test_torch_tensors_launch_inline_on_torchs_stream() -> None:
    recorder = Recorder({})
    tensor = _tensor_type()()
    args = (tensor, jit.int32(3), 7, True)
    run = recorder.write(args)
    run(args, None)
    run(list(args), None)
    assert len(recorder.launches) == 2
    stream, config, kernel, values = recorder.launches[0]
    assert (stream, config, kernel) == ("stream 0x5000", "config", "kernel")
    assert values[:3] == (0x1000, np.int32(3), 7)
    assert values[3] == np.bool_(True)
    assert 0x5000 in recorder.streams  # wrapped once, then found
    assert recorder.general == []


def test_an_explicit_stream_takes_the_general_path() -> None:
    recorder = Recorder({})
    args = (_tensor_type()(),)
    recorder.write(args)(args, 0x7000)
    assert recorder.launches == []
    assert recorder.general == [(0x7000, "torch", "config", [0x1000])]


def test_a_default_stream_of_another_current_device_takes_the_general_path() -> None:
    recorder = Recorder({})
    args = (_tensor_type()(),)
    recorder.write(args, torch_device=1, stream=0)(args, None)
    assert recorder.launches == []
    assert recorder.general == [(None, "torch", "config", [0x1000])]


def test_without_tensors_every_launch_takes_the_general_path() -> None:
    recorder = Recorder({})
    args = (0x10, jit.float32(1.5))
    recorder.write(args)(args, None)
    assert recorder.general == [(None, None, "config", [0x10, np.float32(1.5)])]


def test_a_refused_launch_goes_to_the_failure_handler() -> None:
    recorder = Recorder({})
    recorder.refuse = True
    args = (_tensor_type()(),)
    recorder.write(args)(args, None)
    ((error, stream, contextless, config, values),) = recorder.failed
    assert isinstance(error, RuntimeError)
    assert (stream, contextless, config, values) == ("stream 0x5000", False, "config", [0x1000])


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(lambda args: (*args, 1), id="one more"),
        pytest.param(lambda args: args[:-1], id="one fewer"),
        pytest.param(lambda args: (args[0], jit.int64(3)), id="another type"),
        pytest.param(lambda args: iter(args), id="an iterator"),
        pytest.param(lambda args: 5, id="not a sequence"),
    ],
)
def test_other_argument_counts_or_types_ask_for_another_plan(other: Any) -> None:
    recorder = Recorder({})
    args = (_tensor_type()(), jit.int32(3))
    run = recorder.write(args)
    with pytest.raises(Replan):
        run(other(args), None)
    assert recorder.launches == recorder.general == []


def test_values_that_cannot_pass_raise_before_launching() -> None:
    recorder = Recorder({})
    tensor_type = _tensor_type()
    args = (tensor_type(), 7)
    run = recorder.write(args)
    tensor_type.get_device = lambda self: 1  # type: ignore[attr-defined]
    with pytest.raises(ArgError):
        run(args, None)
    tensor_type.get_device = lambda self: 0  # type: ignore[attr-defined]
    with pytest.raises(ArgError):
        run((tensor_type(), 2**64), None)  # out of 64 bits
    assert recorder.launches == []


def test_no_arguments() -> None:
    recorder = Recorder({})
    recorder.write(())((), None)
    assert recorder.general == [(None, None, "config", [])]


def test_equal_argument_kinds_give_equal_code() -> None:
    # Only indices go into the text: two plans with the same steps share their code object.
    recorder = Recorder({})
    first = recorder.write((_tensor_type()(), 1))
    second = recorder.write((_tensor_type()(), 2))
    assert first.__code__.co_code == second.__code__.co_code
