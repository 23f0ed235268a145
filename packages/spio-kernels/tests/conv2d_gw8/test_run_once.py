"""run_once's command line (CPU) and the sanitizer summary the GPU tier reads."""

from __future__ import annotations

import pytest
from sanitizer_summary import summary_is_clean

from spio.kernels.conv2d_gw8 import FpropConfig, WgradConfig, fprop_spec, run_once

_RACES = "========= RACECHECK SUMMARY:"


def _args(*argv: str):  # type: ignore[no-untyped-def]
    return run_once.build_parser().parse_args(list(argv))


def test_the_layer_comes_from_the_arguments() -> None:
    params = run_once.layer(
        _args("fprop", "3x16x9x7", "--r", "5", "--s", "3", "--padding", "2", "1", "0", "2",
              "--bias", "--dtype", "bfloat16")
    )  # fmt: skip
    assert (params.n, params.c, params.h, params.w, params.r, params.s) == (3, 16, 9, 7, 5, 3)
    assert params.padding == (2, 1, 0, 2)
    assert params.has_bias
    assert params.dtype == "bfloat16"
    assert run_once.layer(_args("wgrad", "3x16x9x7", "--bias")).has_bias  # its gradient
    assert not run_once.layer(_args("dgrad", "3x16x9x7", "--bias")).has_bias  # none in dgrad
    assert run_once.layer(_args("dgrad", "1x8x4x4", "--padding", "1", "0")).padding == (1, 1, 0, 0)


def test_bad_layers_are_refused_by_name() -> None:
    with pytest.raises(SystemExit):
        _args("conv", "1x8x4x4")
    with pytest.raises(SystemExit):
        _args("fprop", "1x8x4")
    with pytest.raises(ValueError, match="--padding takes 1, 2 or 4 ints, got 3"):
        run_once.layer(_args("fprop", "1x8x4x4", "--padding", "1", "1", "1"))
    with pytest.raises(ValueError, match="c must be"):
        run_once.layer(_args("fprop", "1x12x4x4"))


def test_config_fields_replace_the_defaults() -> None:
    config = run_once.with_fields(FpropConfig(), ["prefetch=1", "mma_k=16"])
    assert config == FpropConfig(prefetch=1, mma_k=16)
    wgrad = run_once.with_fields(WgradConfig(block_n=2), ["image_sync=1", "walk_n=2"])
    assert wgrad.image_sync is True
    assert wgrad.walk_n == 2
    with pytest.raises(ValueError, match=r"FIELD one of \[.*'prefetch'.*\], got 'depth=2'"):
        run_once.with_fields(FpropConfig(), ["depth=2"])
    with pytest.raises(ValueError, match="prefetch is an int, got 'two'"):
        run_once.with_fields(FpropConfig(), ["prefetch=two"])
    with pytest.raises(ValueError, match="image_sync is 0/1 or false/true, got 'yes'"):
        run_once.with_fields(WgradConfig(block_n=2), ["image_sync=yes"])


def test_a_config_the_layer_cannot_run_is_refused() -> None:
    params = run_once.layer(_args("fprop", "1x8x4x4"))
    config = run_once.with_fields(fprop_spec.default_config(params), ["block_g=2"])
    with pytest.raises(ValueError, match="block_g"):
        fprop_spec.check_config(params, config)


def test_a_refused_config_names_the_default_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    # On a small layer the device's wgrad default splits the filter's rows, which segments
    # do not walk: the refusal says what --config changed (CPU: the default of an H200).
    from spio.kernels.conv2d_gw8 import wgrad

    monkeypatch.setattr(wgrad, "default_config_on", lambda params: _h200_default("wgrad", params))
    params = run_once.layer(_args("wgrad", "3x64x20x18"))
    assert _h200_default("wgrad", params).block_r == 1
    with pytest.raises(ValueError, match=r"segments must be 0.*--config changes this default: .*"
                       r"block_r=1"):  # fmt: skip
        run_once._pass_config("wgrad", params, ["segments=7"])
    assert run_once._pass_config("wgrad", params, ["segments=7", "block_r=0"]).segments == 7


@pytest.mark.parametrize(
    ("tool", "output", "clean"),
    [
        ("memcheck", "prog line\n========= ERROR SUMMARY: 0 errors\n", True),
        ("synccheck", "========= ERROR SUMMARY: 3 errors\n", False),
        ("memcheck", "no summary at all\n", False),
        ("racecheck", f"{_RACES} 0 hazards displayed (0 errors, 0 warnings)", True),
        ("racecheck", f"{_RACES} 2 hazards displayed (0 errors, 2 warnings)", False),
        ("racecheck", "========= ERROR SUMMARY: 0 errors\n", False),
    ],
)  # fmt: skip
def test_the_sanitizer_summary_is_read_per_tool(tool: str, output: str, clean: bool) -> None:
    assert summary_is_clean(tool, output) is clean


def _h200_default(pass_name: str, params):  # type: ignore[no-untyped-def]
    """The pass's default tile on a GPU of 132 SMs with TMA (an H200), as the launchers start
    from it before any placement that compiles (CPU: no device to ask)."""
    from spio.kernels.conv2d_gw8 import dgrad_spec, wgrad_heuristic, wgrad_tma_tile

    if pass_name == "fprop":
        return fprop_spec.default_config(params, 132)
    if pass_name == "dgrad":
        return dgrad_spec.default_config(params, 132)
    tile = wgrad_tma_tile.tma_tile(params, wgrad_heuristic.default_config(params, 132), 132)
    return wgrad_heuristic.split_walk_tile(params, tile, 132)


def test_every_sanitizer_case_runs_its_layer_from_the_default_tile() -> None:
    # The sanitizer's cases name fields to change on the device's default config; a default
    # that moved (wgrad's small layers now split the filter's rows) must not turn a case into
    # a refused config, which the GPU tier would only report as a failed run.
    from test_sanitizer_gpu import CASES, run_once_args

    from spio.kernels.conv2d_gw8 import dgrad_spec, wgrad_spec

    checks = {"fprop": fprop_spec, "dgrad": dgrad_spec, "wgrad": wgrad_spec}
    for case in CASES:
        args = _args(*run_once_args(case))
        params = run_once.layer(args)
        config = run_once.with_fields(_h200_default(args.pass_name, params), args.config)
        checks[args.pass_name].check_config(params, config)
