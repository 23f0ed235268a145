"""A campaign on the GPU, end to end: the real benchmark times a small layer, the rows read
back with the kernels' version, and a model trains on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.kernels.conv2d_gw8.sources_digest import sources_digest
from spio.perfmodel import LatencyModel, read_config_times
from spio.perfmodel._campaign import collect

pytestmark = pytest.mark.gpu


def test_collect_times_a_layer_and_a_model_trains_on_it(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    layers = [
        Conv2dGw8Params.make(2, 64, 16, 16),
        Conv2dGw8Params.make(4, 64, 8, 8, r=1, s=1, padding=0),
    ]
    timed = collect(tmp_path, layers, 2, passes=("fprop", "wgrad"))
    assert timed == layers
    for pass_name in ("fprop", "wgrad"):
        table = read_config_times(tmp_path / f"conv2d_gw8_configs_{pass_name}.csv")
        assert table.skipped == ()
        rows = table.select(pass_name).rows
        assert {row.params for row in rows} == set(layers)
        assert len(rows) == 6  # the default and 2 sampled configs per layer
        assert {(row.timing, row.kernel) for row in rows} == {("graph", sources_digest(pass_name))}
        assert all(0 < row.median_us < 1e4 for row in rows)
        model = LatencyModel.train(list(rows))
        assert model.best_config(layers[0]) is not None
    assert collect(tmp_path, layers, 2, passes=("fprop", "wgrad")) == []


def test_limits_of_the_device() -> None:
    from spio.perfmodel import GpuLimits

    limits = GpuLimits.of_device(0)
    assert limits.sm_count > 0
    assert limits.max_threads_per_sm >= 1024
    assert limits.shared_per_sm >= 64 * 1024


def test_retime_times_an_older_kernels_rows_again(tmp_path: Path) -> None:
    import dataclasses

    pytest.importorskip("torch")
    from spio.perfmodel._retime import retime

    layer = Conv2dGw8Params.make(2, 64, 16, 16)
    collect(tmp_path / "campaign", [layer], 2, passes=("fprop",))
    rows = read_config_times(tmp_path / "campaign" / "conv2d_gw8_configs_fprop.csv").rows
    older = [dataclasses.replace(row, kernel="0123456789ab") for row in rows]
    assert len(retime(older, tmp_path / "again")) == 1
    again = read_config_times(tmp_path / "again" / "conv2d_gw8_configs_fprop.csv").rows
    assert [row.config for row in again] == [row.config for row in rows]
    assert {(row.kernel, row.timing) for row in again} == {(sources_digest("fprop"), "graph")}
    assert all(0 < row.median_us < 1e4 for row in again)
