"""Conditions that narrow the configs a benchmark run times (--where), without a GPU."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, WgradConfig
from spio.kernels.conv2d_gw8.bench import _configs_to_time, parse_args, tile_of
from spio.kernels.conv2d_gw8.config_where import ConfigWhere
from spio.kernels.conv2d_gw8.fprop_spec import config_space
from spio.kernels.conv2d_gw8.wgrad_spec import config_space as wgrad_space

LAYER = Conv2dGw8Params.make(128, 64, 64, 64)


def test_conditions_parse_into_fields_and_a_field_named_twice_takes_both_lists() -> None:
    where = ConfigWhere.parse(["block_p=4,8", "prefetch=6", "block_p=8, 16"])
    assert dict(where.fields) == {"block_p": ("4", "8", "16"), "prefetch": ("6",)}
    assert str(where) == "block_p=4,8,16 prefetch=6"


@pytest.mark.parametrize("text", ["block_p", "block_p=", "=4", "block_p=4,,8", "block p=4"])
def test_a_malformed_condition_is_named(text: str) -> None:
    with pytest.raises(ValueError, match=r"FIELD=VALUE\[,VALUE\.\.\.\].*" + repr(text)[1:-1]):
        ConfigWhere.parse([text])


def test_select_keeps_the_configs_whose_fields_take_the_values_in_order() -> None:
    space = config_space(LAYER)
    chosen = ConfigWhere.parse(["block_p=4,8", "prefetch=6"]).select(space, "fprop")
    assert chosen == [c for c in space if c.block_p in (4, 8) and c.prefetch == 6]
    assert 0 < len(chosen) < len(space)
    assert ConfigWhere.parse(["block_p=3"]).select(space, "fprop") == []
    assert ConfigWhere.parse(["block_p=3"]).select([], "fprop") == []


def test_bool_fields_take_true_or_false() -> None:
    space = wgrad_space(LAYER)
    chosen = ConfigWhere.parse(["tma=true"]).select(space, "wgrad")
    assert chosen
    assert all(c.tma for c in chosen)
    assert ConfigWhere.parse(["tma=False"]).select(space, "wgrad") == [
        c for c in space if not c.tma
    ]
    with pytest.raises(ValueError, match="tma takes true or false, got 'yes'"):
        ConfigWhere.parse(["tma=yes"]).select(space, "wgrad")


def test_a_field_the_configs_lack_or_a_value_of_another_type_is_named() -> None:
    example = WgradConfig()
    with pytest.raises(ValueError, match="wgrad's configs \\(WgradConfig\\) have no field 'mma_k'"):
        ConfigWhere.parse(["mma_k=8"]).for_config(example, "wgrad")
    with pytest.raises(ValueError, match="block_p takes integers, got 'four'"):
        ConfigWhere.parse(["block_p=four"]).for_config(FpropConfig(), "fprop")


def _args(*argv: str) -> argparse.Namespace:
    return parse_args(["--shapes", "128x64x64x64", *argv])


def test_the_command_line_checks_where_against_every_pass_before_timing() -> None:
    args = _args("--all-configs", "--where", "block_p=4,8", "prefetch=6", "--passes", "fprop")
    assert args.config_where == ConfigWhere.parse(["block_p=4,8", "prefetch=6"])
    assert _args("--all-configs").config_where is None
    with pytest.raises(SystemExit):
        _args("--where", "block_p=4")  # it narrows --all-configs' space
    with pytest.raises(SystemExit):
        _args("--all-configs", "--where", "mma_k=8", "--passes", "fprop", "wgrad")
    with pytest.raises(SystemExit):
        _args("--all-configs", "--where", "block_p")


def test_where_narrows_the_sample_and_keeps_the_default_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    default = dataclasses.replace(config_space(LAYER)[0], segments=3)  # a placed default
    argv = ["--all-configs", "--sample-configs", "10", "--passes", "fprop", "--where"]
    args = _args(*argv, "block_p=4", "prefetch=6", "mma_k=16")
    configs = _configs_to_time(args, LAYER, "fprop", default)
    assert configs[0] == default
    # The default's tile, then ten of the narrowed space.
    assert configs[1] == tile_of(default)
    others = configs[2:]
    assert len(others) == 10
    assert all((c.block_p, c.prefetch, c.mma_k) == (4, 6, 16) for c in others)
    # The whole narrowed space without --sample-configs.
    args = _args("--all-configs", "--passes", "fprop", "--where", "block_p=4", "prefetch=6")
    whole = _configs_to_time(args, LAYER, "fprop", default)
    assert whole == [
        default,
        *(c for c in config_space(LAYER) if c.block_p == 4 and c.prefetch == 6),
    ]
    # Where nothing matches, the default alone, said on stdout.
    args = _args("--all-configs", "--passes", "fprop", "--where", "block_p=3")
    assert _configs_to_time(args, LAYER, "fprop", default) == [default]
    assert (
        "128x64x64x64 fprop: no config has block_p=3; the default alone" in capsys.readouterr().out
    )
