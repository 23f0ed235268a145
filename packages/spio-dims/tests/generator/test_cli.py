"""The `spio-dims` command, through the installed entry point and through main(argv)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import spio.dims
from spio.dims import generate_file, include_dir
from spio.dims._cli import main

LESSON = Path(__file__).parent / "golden" / "lessons" / "03_folding.cpp"
BAD = "// kernel\n/*@spio\n[\nDim('i'),\nTensor('A', dtype.float, Dims(k8=4, k=5))\n]\n@spio*/\n"


def run(cli: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cli), *args], capture_output=True, text=True, input=stdin, check=False
    )


def test_gen_writes_the_header_to_stdout(cli: Path) -> None:
    result = run(cli, "gen", str(LESSON))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == generate_file(LESSON)


def test_gen_writes_the_header_to_a_file(cli: Path, tmp_path: Path) -> None:
    out = tmp_path / "types.h"
    result = run(cli, "gen", str(LESSON), "-o", str(out))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert out.read_text() == LESSON.with_suffix(".h").read_text()


def test_spec_error_is_one_line_with_file_and_line(cli: Path, tmp_path: Path) -> None:
    source = tmp_path / "bad.cu"
    source.write_text(BAD)
    result = run(cli, "gen", str(source))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"spio-dims: error: {source}:5: inconsistent sizes")
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_unsafe_block_is_an_error_not_a_crash(cli: Path, tmp_path: Path) -> None:
    source = tmp_path / "evil.cu"
    marker = tmp_path / "ran"
    source.write_text(f"/*@spio\n[__import__('os').system('touch {marker}')]\n@spio*/\n")
    result = run(cli, "gen", str(source))
    assert result.returncode == 2
    assert result.stderr.startswith(f"spio-dims: error: {source}:2: calling ")
    assert not marker.exists()


def test_missing_file(cli: Path, tmp_path: Path) -> None:
    result = run(cli, "gen", str(tmp_path / "nope.cu"))
    assert result.returncode == 2
    assert result.stderr == f"spio-dims: error: {tmp_path / 'nope.cu'}: No such file or directory\n"


def test_gen_reads_stdin(cli: Path) -> None:
    result = run(cli, "gen", "-", stdin=LESSON.read_text())
    assert result.returncode == 0
    assert "// Source:" not in result.stdout
    assert "using K8 = spio::Fold<K, 8>;" in result.stdout


def test_include_dir(cli: Path) -> None:
    result = run(cli, "include-dir")
    if not (include_dir() / "spio" / "spio.h").is_file():
        assert result.returncode == 2
        pytest.skip("the C++ headers are not in this checkout")
    assert (result.returncode, result.stderr) == (0, "")
    path = Path(result.stdout.strip())
    assert path == include_dir() == Path(spio.dims.__file__).resolve().parent / "include"
    assert (path / "spio" / "spio.h").is_file()


def test_version(cli: Path) -> None:
    result = run(cli, "--version")
    assert (result.returncode, result.stdout) == (0, f"spio-dims {spio.dims.__version__}\n")


def test_usage_errors_exit_2(cli: Path) -> None:
    for args in ([], ["gen"], ["frobnicate"]):
        result = run(cli, *args)
        assert result.returncode == 2
        assert "Traceback" not in result.stderr


def test_module_runs_as_a_script() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "spio.dims._cli", "gen", str(LESSON)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, generate_file(LESSON))


def test_main_gen(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", str(LESSON)]) == 0
    assert capsys.readouterr().out == generate_file(LESSON)


def test_main_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "bad.cu"
    source.write_text(BAD)
    assert main(["gen", str(source)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"spio-dims: error: {source}:5: ")


def test_main_no_blocks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "plain.cu"
    source.write_text("int x;\n")
    assert main(["gen", str(source)]) == 2
    assert capsys.readouterr().err.startswith(f"spio-dims: error: {source}: no /*@spio")


def test_main_not_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "latin1.cu"
    source.write_bytes(b"// caf\xe9\n")
    assert main(["gen", str(source)]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err


def test_main_leaves_an_up_to_date_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "types.h"
    assert main(["gen", str(LESSON), "-o", str(out)]) == 0
    os.utime(out, (1_000_000, 1_000_000))
    assert main(["gen", str(LESSON), "-o", str(out)]) == 0
    assert out.stat().st_mtime == 1_000_000
    out.write_text("stale")
    assert main(["gen", str(LESSON), "-o", str(out)]) == 0
    assert out.read_text() == generate_file(LESSON)


def test_main_unwritable_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "missing" / "types.h"
    assert main(["gen", str(LESSON), "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"spio-dims: error: {out}: ")


def test_main_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"spio-dims {spio.dims.__version__}\n"


def test_main_include_dir(capsys: pytest.CaptureFixture[str]) -> None:
    if not (include_dir() / "spio" / "spio.h").is_file():
        pytest.skip("the C++ headers are not in this checkout")
    assert main(["include-dir"]) == 0
    assert capsys.readouterr().out == f"{include_dir()}\n"


def test_main_refuses_to_write_over_its_source(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "kernel.cu"
    source.write_text(LESSON.read_text())
    assert main(["gen", str(source), "-o", str(tmp_path / "." / "kernel.cu")]) == 2
    assert "is FILE itself" in capsys.readouterr().err
    assert source.read_text() == LESSON.read_text()


def test_main_replaces_the_output_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "types.h"
    out.write_text("stale")
    out.chmod(0o640)
    assert main(["gen", str(LESSON), "-o", str(out)]) == 0
    assert out.read_text() == generate_file(LESSON)
    assert out.stat().st_mode & 0o777 == 0o640
    assert [path.name for path in tmp_path.iterdir()] == ["types.h"]  # no temporary left
    fresh = tmp_path / "fresh.h"
    assert main(["gen", str(LESSON), "-o", str(fresh)]) == 0
    assert fresh.stat().st_mode & 0o777 == 0o644


def test_main_output_dash_is_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (B3): `-o -` writes stdout, as FILE `-` reads stdin; no file named '-'."""
    monkeypatch.chdir(tmp_path)
    assert main(["gen", str(LESSON), "-o", "-"]) == 0
    assert capsys.readouterr().out == generate_file(LESSON)
    assert list(tmp_path.iterdir()) == []


def test_main_writes_through_a_symlink(tmp_path: Path) -> None:
    """Regression (B3): the file a symlink names gets the header; the link stays a link."""
    real = tmp_path / "real.h"
    real.write_text("stale")
    link = tmp_path / "link.h"
    link.symlink_to(real.name)
    assert main(["gen", str(LESSON), "-o", str(link)]) == 0
    assert link.is_symlink()
    assert real.read_text() == generate_file(LESSON)
    dangling = tmp_path / "dangling.h"
    dangling.symlink_to("made.h")
    assert main(["gen", str(LESSON), "-o", str(dangling)]) == 0
    assert dangling.is_symlink()
    assert (tmp_path / "made.h").read_text() == generate_file(LESSON)


def test_main_writes_into_a_fifo(tmp_path: Path) -> None:
    """Regression (B3): a FIFO (like /dev/null or /dev/stdout, which are not safe to test) is
    written to, not replaced by a regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    # A daemon: were the FIFO replaced, its reader would wait forever.
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        assert main(["gen", str(LESSON), "-o", str(fifo)]) == 0
    finally:
        reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert received == [generate_file(LESSON).encode()]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gen", ""], "FILE is an empty path ''; give the source file, or '-' to read stdin"),
        (["gen", str(LESSON), "-o", ""], "OUT is an empty path ''; give the header file, or '-'"),
    ],
    ids=["file", "out"],
)
def test_main_refuses_empty_paths(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (P5): an empty FILE or OUT is named, not reported as 'Is a directory'."""
    assert main(args) == 2
    assert capsys.readouterr().err.startswith(f"spio-dims: error: {message}")
