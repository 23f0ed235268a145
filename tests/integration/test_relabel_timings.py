"""tools/relabel_timings.py: a digest changes in the pass's rows and nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_module import load_tool

tool = load_tool("relabel_timings")
HEADER = "gpu,shape,kernel,pass_name,block_q,median_us\r\n"  # csv's own line ending
ROWS = [
    "GPU,2x64x8x8,aaaaaaaaaaaa,wgrad,16,3.5\n",
    "GPU,2x64x8x8,aaaaaaaaaaaa,fprop,16,2.5\n",  # another pass keeps its digest
    "GPU,2x64x8x8,bbbbbbbbbbbb,wgrad,16,3.4\n",  # rows of another version stay
]


def test_only_the_pass_rows_of_the_old_digest_change(tmp_path: Path) -> None:
    path = tmp_path / "conv2d_gw8_configs_wgrad.csv"
    path.write_bytes((HEADER + "".join(ROWS)).encode())
    assert tool.relabel_csv(path, "wgrad", "aaaaaaaaaaaa", "cccccccccccc") == 1
    expected = HEADER + ROWS[0].replace("aaaaaaaaaaaa", "cccccccccccc") + ROWS[1] + ROWS[2]
    assert path.read_bytes() == expected.encode()  # every other byte as it was
    assert tool.relabel_csv(path, "wgrad", "aaaaaaaaaaaa", "cccccccccccc") == 0


def test_a_file_whose_columns_moved_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "times.csv"
    path.write_text("gpu,kernel,shape,pass_name\nGPU,aaaaaaaaaaaa,2x64x8x8,wgrad\n")
    with pytest.raises(ValueError, match="kernel and pass_name are not neighbouring columns"):
        tool.relabel_csv(path, "wgrad", "aaaaaaaaaaaa", "cccccccccccc")


def test_rows_whose_header_defines_the_macro_keep_the_old_digest(tmp_path: Path) -> None:
    # fprop at 56 rows: chunks of 16 leave a short last one (its header defines
    # CONV2D_GW8_SHORT_LAST_CHUNK), chunks of 8 do not.
    header = (
        "gpu,shape,n,c,h,w,r,s,padding,dtype,timing,kernel,pass_name,"
        "block_q,block_g,warp_g,warp_q16,block_p,prefetch,mma_k,median_us\n"
    )
    layer = "GPU,4x64x56x32,4,64,56,32,3,3,1 1 1 1,float16,graph"
    short = f"{layer},aaaaaaaaaaaa,fprop,16,8,2,1,16,1,16,9.5\n"
    whole = f"{layer},aaaaaaaaaaaa,fprop,16,8,2,1,8,1,16,9.9\n"
    refused = f"{layer},aaaaaaaaaaaa,fprop,16,3,2,1,8,1,16,9.9\n"  # 3 groups: no config
    path = tmp_path / "conv2d_gw8_configs_fprop.csv"
    path.write_text(header + short + whole + refused)
    moved = tool.relabel_csv(
        path, "fprop", "aaaaaaaaaaaa", "cccccccccccc", "CONV2D_GW8_SHORT_LAST_CHUNK"
    )
    assert moved == 1
    relabelled = whole.replace("aaaaaaaaaaaa", "cccccccccccc")
    assert path.read_text() == header + short + relabelled + refused


def test_launched_rows_whose_chunks_the_launcher_now_evens_keep_the_old_digest(
    tmp_path: Path,
) -> None:
    # wgrad at 56 rows timed as launched: the launcher now walks a 16-row tile in chunks of
    # 14; a 64-row tile is one chunk either way, and a tile timed as it is runs as given.
    header = (
        "gpu,shape,n,c,h,w,r,s,padding,dtype,timing,launch,kernel,pass_name,block_q,block_g,"
        "warp_g,block_p,prefetch,block_n,walk_n,image_sync,median_us\n"
    )
    layer = "GPU,32x64x56x56,32,64,56,56,3,3,1 1 1 1,float16,graph"
    tile = "aaaaaaaaaaaa,wgrad,16,8,2,{},2,4,1,False,9.9\n"
    evened = f"{layer},launcher,{tile.format(16)}"
    whole = f"{layer},launcher,{tile.format(64)}"
    as_given = f"{layer},tile,{tile.format(16)}"
    path = tmp_path / "conv2d_gw8_configs_wgrad.csv"
    path.write_text(header + evened + whole + as_given)
    moved = tool.relabel_csv(path, "wgrad", "aaaaaaaaaaaa", "cccccccccccc", unless_evened=True)
    assert moved == 2
    relabelled = [row.replace("aaaaaaaaaaaa", "cccccccccccc") for row in (whole, as_given)]
    assert path.read_text() == header + evened + "".join(relabelled)
