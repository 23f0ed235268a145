"""Retiming the rows of older kernels: which layers and configs, and the rows it writes (the
benchmark's timing faked; the GPU test times a layer for real)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from synthetic import GPU, LAYERS, synthetic_rows

import spio.jit
from spio.kernels.conv2d_gw8.sources_digest import sources_digest
from spio.perfmodel import read_config_times
from spio.perfmodel._cli import main
from spio.perfmodel._retime import retime, retime_jobs

OLD = "0123456789ab"


def _old_rows(pass_name: str, layers: Any = LAYERS[:2], per_layer: int = 3) -> list[Any]:
    rows = synthetic_rows(pass_name, list(layers), per_layer=per_layer)
    return [dataclasses.replace(row, kernel=OLD) for row in rows]


class FakeBench:
    """The benchmark's timing, on the CPU: a config's time is 1 us plus its index among the
    configs timed; a launched tile runs as the tile with prefetch 1 (a stand-in placement)."""

    def __init__(self) -> None:
        self.timed: list[Any] = []

    def launched_configs(self, pass_name: str, params: Any, tiles: Any) -> dict[Any, Any]:
        return {tile: dataclasses.replace(tile, prefetch=1) for tile in tiles}

    def precompile(self, params: Any, configs: dict[str, Any]) -> None:
        pass

    def Buffers(self, params: Any, passes: Any, configs: Any) -> object:  # noqa: N802
        return object()

    def bench_pass(
        self, pass_name: str, params: Any, configs: Any, buffers: Any, *args: Any, **kw: Any
    ) -> tuple[dict[Any, float], float]:
        self.timed += configs
        return {config: 1.0 + len(self.timed) + i for i, config in enumerate(configs)}, 5.0


@pytest.fixture
def fake_bench(monkeypatch: pytest.MonkeyPatch) -> FakeBench:
    torch = pytest.importorskip("torch")
    from spio.kernels.conv2d_gw8 import bench

    fake = FakeBench()
    for name in ("launched_configs", "precompile", "Buffers", "bench_pass"):
        monkeypatch.setattr(bench, name, getattr(fake, name))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: GPU)
    monkeypatch.setattr(spio.jit, "device_info", lambda index=0: None)
    return fake


def test_jobs_group_the_rows_by_pass_launch_and_layer(tmp_path: Path) -> None:
    rows = _old_rows("fprop")
    launched = [dataclasses.replace(row, launch="launcher") for row in rows[:3]]
    jobs = retime_jobs(rows + rows[:2] + launched, tmp_path)
    assert [(job.launch, job.params) for job in jobs] == [
        ("tile", LAYERS[0]),
        ("tile", LAYERS[1]),
        ("launcher", LAYERS[0]),
    ]
    # Each config once, in the rows' order.
    assert jobs[0].configs == tuple(row.config for row in rows[:3])
    with pytest.raises(ValueError, match=r"rows of one GPU .* GPUs \['Other', 'Synthetic GPU'\]"):
        retime_jobs([*rows, dataclasses.replace(rows[0], gpu="Other")], tmp_path)


def test_retime_writes_todays_digest_and_resumes(tmp_path: Path, fake_bench: FakeBench) -> None:
    rows = _old_rows("wgrad")
    launched = [dataclasses.replace(row, launch="launcher") for row in rows[:3]]
    jobs = retime(rows + launched, tmp_path)
    assert len(jobs) == 3
    table = read_config_times(tmp_path / "conv2d_gw8_configs_wgrad.csv")
    new = table.select("wgrad").rows
    assert {row.kernel for row in new} == {sources_digest("wgrad")}
    assert {row.timing for row in new} == {"graph"}
    written = [(row.launch, row.params, row.config) for row in new]
    assert sorted(written, key=repr) == sorted(
        ((row.launch, row.params, row.config) for row in rows + launched), key=repr
    )
    # A launched row is timed as its placed config, and written as its tile.
    assert fake_bench.timed[-3:] == [dataclasses.replace(r.config, prefetch=1) for r in launched]
    assert all(row.median_us > 1.0 for row in new)
    # Everything is in the directory now: a second run times nothing.
    before = len(fake_bench.timed)
    assert retime(rows + launched, tmp_path) == []
    assert len(fake_bench.timed) == before


def test_retime_refuses_another_gpus_rows(tmp_path: Path, fake_bench: FakeBench) -> None:
    rows = [dataclasses.replace(row, gpu="NVIDIA H100 80GB HBM3") for row in _old_rows("fprop")]
    with pytest.raises(ValueError, match=r"timed on \['NVIDIA H100 80GB HBM3'\]; this GPU is"):
        retime(rows, tmp_path)
    assert fake_bench.timed == []


def test_without_a_gpu_the_commands_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # (device_info is cached per process: on a GPU machine it would answer from the cache.)
    monkeypatch.setattr(spio.jit._driver, "device_count", lambda: 0)
    monkeypatch.setattr(spio.jit, "device_info", spio.jit._driver.check_device_index)
    times = tmp_path / "times.csv"
    _write_old_times(times)
    for argv in (
        ["retime", str(times), "--pass", "fprop", "--kernel", OLD, "--out", str(tmp_path)],
        ["collect", "--out", str(tmp_path), "--layers", "1"],
    ):
        with pytest.raises(SystemExit):
            main(argv)
        assert "device=0 does not exist; this process sees no CUDA device" in (
            capsys.readouterr().err
        )


def _write_old_times(times: Path) -> None:
    """Rows of LAYERS[:2] as an older kernel's (OLD) config times CSV."""
    from spio.kernels.conv2d_gw8.bench_results import write_config_times

    old = _old_rows("fprop")
    for params in LAYERS[:2]:
        configs = {row.config: row.median_us for row in old if row.params == params}
        write_config_times(GPU, "fprop", params, configs, times, timing="graph")
    # (write_config_times writes today's digest: make these rows an older kernel's.)
    times.write_text(times.read_text().replace(sources_digest("fprop"), OLD))


def test_the_command_times_the_rows_of_the_named_kernel(
    tmp_path: Path, fake_bench: FakeBench, capsys: pytest.CaptureFixture[str]
) -> None:
    times = tmp_path / "times.csv"
    _write_old_times(times)
    out = tmp_path / "new"
    main(["retime", str(times), "--pass", "fprop", "--kernel", OLD, "--out", str(out)])
    assert "timed 6 configs of 2 layer-passes again" in capsys.readouterr().out
    new = read_config_times(out / "conv2d_gw8_configs_fprop.csv").select("fprop").rows
    assert len(new) == 6
    with pytest.raises(SystemExit) as caught:
        main(["retime", str(times), "--pass", "fprop", "--kernel", "ffffffffffff", "--out",
              str(out)])  # fmt: skip
    assert caught.value.code == 2
    assert "no fprop rows of --kernel ffffffffffff" in capsys.readouterr().err
