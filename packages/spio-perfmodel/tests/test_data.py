"""read_config_times: the bench's config-times CSVs, old and new, and rows left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from spio.kernels.conv2d_gw8 import FpropConfig, WgradConfig
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import layer_key, read_config_times
from spio.perfmodel._data import parse_layer_key

NEW_HEADER = (
    "gpu,shape,n,c,h,w,r,s,padding,dtype,timing,kernel,pass_name,"
    "block_q,block_g,warp_g,block_p,prefetch,block_n,walk_n,image_sync,median_us\n"
)


def test_new_format_rows_carry_the_whole_layer(tmp_path: Path) -> None:
    path = tmp_path / "times.csv"
    path.write_text(
        NEW_HEADER + "H200,16x64x20x20,16,64,20,20,5,3,2 2 1 1,bfloat16,graph,0123456789ab,"
        "wgrad,16,4,1,16,1,4,1,True,12.5\n"
    )
    table = read_config_times(path)
    assert table.skipped == ()
    (row,) = table.rows
    assert row.params == Conv2dGw8Params(16, 64, 20, 20, 5, 3, (2, 2, 1, 1), "bfloat16")
    assert row.config == WgradConfig(16, 4, 1, 16, 1, 4, 1, image_sync=True)
    assert (row.gpu, row.pass_name, row.median_us, row.timing) == ("H200", "wgrad", 12.5, "graph")
    assert row.kernel == "0123456789ab"
    assert table.select("wgrad", kernel="0123456789ab").rows == (row,)
    assert table.select("wgrad", kernel="ba9876543210").rows == ()
    assert layer_key(row.params) == "16x64x20x20 5x3 pad 2 2 1 1 bfloat16"


def test_old_files_read_as_3x3_padding_1_float16_loop_timing(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text(
        "gpu,shape,pass_name,block_q,block_g,warp_g,block_p,prefetch,block_n,median_us\n"
        "H200,32x64x64x64,wgrad,16,4,1,16,1,4,13.1\n"
        "gpu,shape,pass_name,block_q,block_g,warp_g,warp_q16,block_p,prefetch,mma_k,median_us\n"
    )
    table = read_config_times(path)
    (row,) = table.rows
    assert row.params == Conv2dGw8Params.make(32, 64, 64, 64)
    assert row.config == WgradConfig(16, 4, 1, 16, 1, 4)  # walk_n 1, no image_sync
    assert (row.timing, row.kernel) == ("loop", "")  # the kernels' version is unknown
    assert row.launch == "tile"  # as every campaign timed them before the column
    # A repeated header line is not a row: it is left out and named.
    assert len(table.skipped) == 1
    assert f"{path}:3:" in table.skipped[0]


def test_rows_the_kernel_no_longer_accepts_are_listed_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "times.csv"
    path.write_text(
        "gpu,shape,pass_name,block_q,block_g,warp_g,warp_q16,block_p,prefetch,mma_k,median_us\n"
        "H200,8x64x16x16,fprop,32,8,2,2,16,2,16,5.0\n"
        "H200,8x64x16x16,fprop,24,8,2,2,16,2,16,5.0\n"  # block_q not a multiple of 16
        "H200,8x64x16x16,fprop,32,8,2,2,16,2,16,-1\n"
        "H200,8x64x16x16,flop,32,8,2,2,16,2,16,5.0\n"
    )
    table = read_config_times([path])
    assert [row.config for row in table.rows] == [FpropConfig(32, 8, 2, 2, 16, 2, 16)]
    assert [line.split(": ", 1)[0] for line in table.skipped] == [
        f"{path}:3",
        f"{path}:4",
        f"{path}:5",
    ]
    assert "median_us must be a positive finite number, got -1.0" in table.skipped[1]
    assert "pass must be one of" in table.skipped[2]


def test_a_file_without_the_columns_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "bench.csv"
    path.write_text("gpu,shape,contender,median_us\n")
    with pytest.raises(ValueError, match=r"bench\.csv is not a config-times CSV.*pass_name"):
        read_config_times(path)


def test_the_benchmarks_table_beside_the_config_times_is_refused(tmp_path: Path) -> None:
    # A campaign's folder holds its table too; a glob of *.csv must not read it as configs.
    from spio.kernels.conv2d_gw8.bench_results import contender_rows, write_csv

    layer = Conv2dGw8Params.make(2, 64, 8, 8)
    rows = contender_rows(layer, "wgrad", "a config", 9.0, 20.0, copy_gbs=4000.0, gpu="G",
                          torch_version="t", cudnn_version="c", launches=20, repetitions=9,
                          spio_launch="pdl")  # fmt: skip
    path = write_csv(rows, tmp_path / "conv2d_gw8_campaign_bench.csv")
    with pytest.raises(ValueError, match=r"not a config-times CSV: it lacks .*'block_q'"):
        read_config_times(path)


def test_select_and_group_by_layer(tmp_path: Path) -> None:
    path = tmp_path / "times.csv"
    path.write_text(
        "gpu,shape,pass_name,block_q,block_g,warp_g,warp_q16,block_p,prefetch,mma_k,median_us\n"
        "A,8x64x16x16,fprop,32,8,2,2,16,2,16,5.0\n"
        "B,8x64x16x16,fprop,32,8,2,2,16,2,16,6.0\n"
        "A,8x64x16x16,dgrad,32,8,2,2,16,2,16,7.0\n"
        "A,4x64x16x16,fprop,32,8,2,2,16,2,16,3.0\n"
    )
    table = read_config_times(path)
    fprop_a = table.select("fprop", "A")
    assert [row.median_us for row in fprop_a.rows] == [5.0, 3.0]
    assert [layer_key(p) for p in fprop_a.by_layer()] == ["8x64x16x16", "4x64x16x16"]
    assert len(table.select("fprop").rows) == 3


def test_rows_say_how_their_tile_was_launched(tmp_path: Path) -> None:
    header = NEW_HEADER.replace("timing,kernel", "timing,launch,kernel")
    path = tmp_path / "times.csv"
    path.write_text(
        header + "H200,16x64x20x20,16,64,20,20,3,3,1 1 1 1,float16,graph,launcher,0123456789ab,"
        "wgrad,16,4,1,16,1,4,1,True,12.5\n"
        "H200,16x64x20x20,16,64,20,20,3,3,1 1 1 1,float16,graph,tile,0123456789ab,"
        "wgrad,16,4,1,16,1,4,1,True,13.5\n"
        "H200,16x64x20x20,16,64,20,20,3,3,1 1 1 1,float16,graph,placed,0123456789ab,"
        "wgrad,16,4,1,16,1,4,1,True,13.5\n"
    )
    table = read_config_times(path)
    assert [row.launch for row in table.rows] == ["launcher", "tile"]
    assert [row.median_us for row in table.select("wgrad", launch="launcher").rows] == [12.5]
    (skipped,) = table.skipped
    assert "launch must be one of ('tile', 'launcher'), got 'placed'" in skipped


@pytest.mark.parametrize(
    "params",
    [
        Conv2dGw8Params.make(128, 64, 64, 64),
        Conv2dGw8Params.make(2, 512, 56, 56, r=7, s=7, padding=3),
        Conv2dGw8Params.make(16, 64, 20, 20, r=5, s=3, padding=(2, 2, 1, 1), dtype="bfloat16"),
        Conv2dGw8Params.make(1, 8, 1, 1, r=1, s=1, padding=0),
        Conv2dGw8Params.make(4, 96, 9, 9, dtype="bfloat16"),
    ],
)
def test_a_layers_name_reads_back_as_the_layer(params: Conv2dGw8Params) -> None:
    assert parse_layer_key(layer_key(params)) == params


@pytest.mark.parametrize(
    "text", ["", "128x64x64", "128x64x64x64 7x7 pad 3 3", "2x512x56x56 7x7 float16 extra"]
)
def test_what_names_no_layer_is_refused_with_the_form_it_takes(text: str) -> None:
    with pytest.raises(ValueError, match="a layer's name is NxCxHxW") as error:
        parse_layer_key(text)
    assert repr(text) in str(error.value)


def test_a_named_layer_out_of_scope_is_refused_by_the_params() -> None:
    with pytest.raises(ValueError, match="float32"):
        parse_layer_key("8x64x16x16 float32")


_FPROP_HEADER = (
    "gpu,shape,pass_name,block_q,block_g,warp_g,warp_q16,block_p,prefetch,mma_k,median_us\n"
)


@pytest.mark.parametrize("time", ["inf", "1e400", "nan", "0"])
def test_a_time_that_is_not_a_positive_finite_number_is_left_out_with_its_line(
    tmp_path: Path, time: str
) -> None:
    """Regression (B3): inf (and a number past a float's range) passed `> 0` and reached
    XGBoost's labels, which failed with its native backtrace."""
    path = tmp_path / "times.csv"
    path.write_text(
        f"{_FPROP_HEADER}H200,8x64x16x16,fprop,32,8,2,2,16,2,16,5.0\n"
        f"H200,8x64x16x16,fprop,16,8,2,1,16,2,16,{time}\n"
    )
    table = read_config_times(path)
    assert len(table.rows) == 1
    (skipped,) = table.skipped
    assert skipped.startswith(f"{path}:3: ValueError: median_us must be a positive finite number")


def test_a_file_with_a_byte_order_mark_reads_as_one_without(tmp_path: Path) -> None:
    """Regression (P8): a spreadsheet's UTF-8 byte-order mark went into the first column's
    name, and the file was refused as lacking the gpu column."""
    text = f"{_FPROP_HEADER}H200,8x64x16x16,fprop,32,8,2,2,16,2,16,5.0\n"
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(text, encoding="utf-8")
    marked.write_text(text, encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert read_config_times(marked).rows == read_config_times(plain).rows
    assert len(read_config_times(marked).rows) == 1
