"""`python -m spio.kernels.bench matmul`: its arguments and outputs (no GPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spio.kernels import bench
from spio.kernels.matmul.bench import MatmulRow, parse_args, write_outputs


def test_the_family_is_listed_and_its_help_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--help"])
    assert exit_info.value.code == 0
    assert "matmul" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["matmul", "--help"])
    assert exit_info.value.code == 0
    assert "--b-layout" in capsys.readouterr().out


def test_shapes_parse_into_params() -> None:
    args = parse_args(
        ["--shapes", "1024x512x256", "8x8x8", "--dtype", "bfloat16", "--b-layout", "nk"]
    )
    assert [(p.m, p.n, p.k) for p in args.params] == [(1024, 512, 256), (8, 8, 8)]
    assert {(p.dtype, p.b_layout, p.a_layout) for p in args.params} == {("bfloat16", "nk", "mk")}
    transposed = parse_args(["--shapes", "1024x512x256", "--a-layout", "km"])
    assert transposed.params[0].a_shape == (256, 1024)
    assert not transposed.params[0].bias
    assert parse_args(["--shapes", "1024x512x256", "--bias"]).params[0].bias


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shapes", "64x64"], "shape must be M x N x K"),
        (["--shapes", "64x60x64"], "n must be a multiple of 8"),
        (["--launches", "5"], "--launches must be >= 20"),
        (["--b-layout", "tn"], "invalid choice: 'tn'"),
        (["--shapes", "60x64x64", "--a-layout", "km"], "m must be a multiple of 8 with a_layout"),
    ],
)
def test_bad_arguments_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_outputs_hold_every_row(tmp_path: Path) -> None:
    rows = [
        MatmulRow(
            "GPU",
            "2.11",
            "float16",
            "kn",
            "mk",
            False,
            8,
            8,
            8,
            "cublas",
            "",
            2.0,
            0.0005,
            1.0,
            "events",
        ),
        MatmulRow(
            "GPU",
            "2.11",
            "float16",
            "kn",
            "mk",
            False,
            8,
            8,
            8,
            "spio",
            "C()",
            4.0,
            0.0003,
            0.5,
            "events",
        ),
    ]
    write_outputs(rows, tmp_path / "out")
    records = json.loads((tmp_path / "out" / "matmul_bench.json").read_text())
    assert [r["contender"] for r in records] == ["cublas", "spio"]
    lines = (tmp_path / "out" / "matmul_bench.csv").read_text().splitlines()
    assert lines[0].startswith("gpu,torch,dtype,b_layout,a_layout,bias,m,n,k,contender")
    assert len(lines) == 3


@pytest.mark.parametrize(
    ("kernel", "kinds"),
    [
        ("wgmma", {"WgmmaConfig"}),
        ("mma", {"MatmulConfig"}),
        ("auto", {"MatmulConfig", "WgmmaConfig"}),
    ],
)
def test_all_configs_takes_the_space_of_the_kernel_asked_for(
    kernel: str, kinds: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an H100 (stood in for), --kernel wgmma times only the wgmma kernel's configs."""
    import types

    import spio.jit
    from spio.kernels.matmul import bench as matmul_bench
    from spio.kernels.matmul import wgmma_spec

    h100 = types.SimpleNamespace(compute_capability=(9, 0), max_shared_per_block_optin=232448)
    monkeypatch.setattr(spio.jit, "device_info", lambda index=0: h100)
    args = parse_args(["--shapes", "512x512x512", "--kernel", kernel, "--all-configs"])
    params = args.params[0]
    default = (
        matmul_bench.mma_default(params, 132, 232448)
        if kernel == "mma"
        else wgmma_spec.default_config(params)
    )
    configs = matmul_bench._configs(params, default, args)
    assert configs[0] == default
    assert len(set(configs)) == len(configs)
    assert {type(c).__name__ for c in configs} == kinds
    if kernel == "wgmma":
        assert configs[1:] == [c for c in wgmma_spec.config_space() if c != default]
