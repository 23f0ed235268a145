"""tools/fprop_source_check.py: the kernels it builds from another source, before any GPU
work."""

from __future__ import annotations

import sys

import pytest
from tool_module import ROOT, load_tool

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, dgrad_spec, fprop, fprop_spec

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("fprop_source_check")


@pytest.mark.parametrize(("pass_", "spec"), [("fprop", fprop_spec), ("dgrad", dgrad_spec)])
def test_the_other_source_compiles_with_the_pass_header(pass_: str, spec: object) -> None:
    params = Conv2dGw8Params.make(2, 64, 20, 18, r=5, s=5, padding=2)
    config = FpropConfig(16, 8, 1, 1, 16, 2, 16)
    # A text change the digest would see: a comment at the end of the shipped source.
    other = fprop.kernel_source() + "\n// another version\n"
    request, name, geometry = tool.source_request(pass_, params, config, other, "sm_90")
    assert request.source == other
    assert request.headers["types.h"] == spec.generate_types(params, config)  # type: ignore[attr-defined]
    assert name == spec.KERNEL_NAME  # type: ignore[attr-defined]
    assert geometry == spec.launch_geometry(params, config)  # type: ignore[attr-defined]
    assert fprop.compile_requested(request).cubin


#: A launcher's config to replace fields of (the launcher's own needs the GPU's SM count).
LAUNCHER_CONFIG = FpropConfig(32, 8, 1, 2, 28, 2, 16)


@pytest.mark.parametrize("pass_", ["fprop", "dgrad"])
def test_config_replaces_the_named_fields_of_the_launchers(
    pass_: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(getattr(tool, pass_), "default_config_on", lambda params: LAUNCHER_CONFIG)
    params = Conv2dGw8Params.make(2, 512, 56, 56, r=7, s=7, padding=3)
    fields = tool.parse_variant("block_q=64,block_g=1,warp_g=1,warp_q16=1,mma_k=8", FpropConfig)
    assert tool.chosen_config(pass_, params, fields) == FpropConfig(64, 1, 1, 1, 28, 2, 8)


def test_a_config_the_layer_cannot_run_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool.fprop, "default_config_on", lambda params: LAUNCHER_CONFIG)
    # 16 groups: blocks of 3 groups do not divide them.
    params = Conv2dGw8Params.make(2, 128, 16, 16, r=3, s=3, padding=1)
    with pytest.raises(ValueError, match="block_g"):
        tool.chosen_config("fprop", params, {"block_g": 3, "warp_g": 1})


def test_a_config_field_that_does_not_exist_names_the_option() -> None:
    with pytest.raises(SystemExit, match="--config: 'walk_n=2'"):
        tool.parse_variant("walk_n=2", FpropConfig, "--config")
