"""The host side of wgrad's TMA rows that needs no GPU: the map cache, device addresses and
which architectures have TMA. (The maps themselves and the kernels that read them are in the
GPU tier: test_wgrad_gpu.)"""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8._tensor_maps import (
    CACHE_ENTRIES,
    SWIZZLE_SPAN,
    TensorMapCache,
    device_pointer,
    has_tma,
    nhwc_row_map,
)


def test_the_cache_makes_a_pair_of_maps_once_per_pair_of_addresses() -> None:
    made: list[tuple[int, ...]] = []

    def make(pointers: tuple[int, ...]) -> tuple[str, str]:
        made.append(pointers)
        return (f"x@{pointers[0]}", f"dy@{pointers[1]}")

    cache = TensorMapCache(make)
    assert cache((16, 32)) == ("x@16", "dy@32")
    assert cache((16, 32)) == ("x@16", "dy@32")
    assert cache((48, 32)) == ("x@48", "dy@32")
    assert made == [(16, 32), (48, 32)]
    assert len(cache) == 2


def test_the_cache_is_bounded() -> None:
    cache = TensorMapCache(lambda pointers: pointers)
    for address in range(CACHE_ENTRIES + 5):
        cache((address, 0))
    assert len(cache) <= CACHE_ENTRIES


def test_maps_of_a_device_are_made_in_its_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given a device, the cache makes each map inside spio.jit.using_device(device): a
    backward pass runs on an autograd thread that may have no current context."""
    import contextlib

    import spio.jit

    events: list[str] = []

    @contextlib.contextmanager
    def using_device(device: int):  # type: ignore[no-untyped-def]
        events.append(f"enter {device}")
        yield
        events.append(f"exit {device}")

    monkeypatch.setattr(spio.jit, "using_device", using_device)

    def make(pointers: tuple[int, ...]) -> tuple[int, ...]:
        events.append("make")
        return pointers

    TensorMapCache(make, 3)((16, 32))
    assert events == ["enter 3", "make", "exit 3"]
    events.clear()
    TensorMapCache(make)((16, 32))  # no device: the caller's context
    assert events == ["make"]


class _Interface:
    def __init__(self) -> None:
        self.__cuda_array_interface__ = {"data": (4096, False), "shape": (1,), "typestr": "<u2"}


class _TorchLike:
    def data_ptr(self) -> int:
        return 8192


def test_device_pointers_of_what_the_entries_take() -> None:
    assert device_pointer(1024) == 1024
    assert device_pointer(_Interface()) == 4096
    assert device_pointer(_TorchLike()) == 8192
    with pytest.raises(TypeError, match="has no device address"):
        device_pointer(object())


@pytest.mark.parametrize(
    ("arch", "expected"),
    [("sm_80", False), ("sm_86", False), ("sm_89", False), ("sm_90", True), ("sm_90a", True),
     ("sm_100", True), ("sm_120", True)],
)  # fmt: skip
def test_tma_from_sm_90_on(arch: str, expected: bool) -> None:
    assert has_tma(arch) is expected


def test_swizzles_exist_for_every_group_count_and_others_are_refused() -> None:
    assert sorted(SWIZZLE_SPAN) == [1, 2, 4, 8]
    with pytest.raises(ValueError, match="box_groups must be one of"):
        nhwc_row_map(4096, (1, 8, 8, 48), 10, 3)
