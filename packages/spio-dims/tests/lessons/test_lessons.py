"""The five tutorial lessons (seed 000) compile against generated types and pass.

Each lesson's `@spio` blocks are turned into a types header by the `spio-dims` command, then
the lesson is built exactly as the tutorial does,

    spio-dims gen LESSON -o types.h
    c++ -std=c++17 -I"$(spio-dims include-dir)" -I<harness> -include types.h LESSON

with each host compiler, and run. The lesson text is the tutorial's, with the harness include
at the top, UTEST_MAIN() at the end, lesson 4's elided set-up written out, and lesson 3's
accumulation snippet in a test of its own.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import _cxx
import pytest

HERE = Path(__file__).resolve().parent
LESSONS = sorted(HERE.glob("0*.cpp"))


@pytest.fixture(scope="session")
def spio_dims() -> Path:
    """The `spio-dims` entry point of this environment; skip if it is not installed."""
    beside_python = Path(sys.executable).parent / "spio-dims"
    if beside_python.is_file():
        return beside_python
    found = shutil.which("spio-dims")
    if found is None:
        pytest.skip("the spio-dims command is not installed in this environment")
    return Path(found)


@pytest.fixture(scope="session")
def generated(spio_dims: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """Each lesson's types header, generated in parallel; a failure fails every lesson."""
    folder = tmp_path_factory.mktemp("lesson-types")
    headers = {lesson: folder / lesson.stem / "types.h" for lesson in LESSONS}
    for header in headers.values():
        header.parent.mkdir()
    results = _cxx.parallel_map(
        lambda lesson: _cxx.run([spio_dims, "gen", lesson, "-o", headers[lesson]]), LESSONS
    )
    failed = [result.describe() for result in results if not result.ok]
    if failed:
        pytest.fail("spio-dims gen failed:\n" + "\n\n".join(failed))
    return headers


@pytest.fixture(scope="session")
def spio_include_dir(spio_dims: Path) -> str:
    """What `spio-dims include-dir` prints."""
    result = _cxx.run([spio_dims, "include-dir"])
    if not result.ok:
        pytest.fail(result.describe())
    return result.output.strip()


@pytest.fixture(scope="session")
def built(
    cxx: str,
    generated: dict[Path, Path],
    spio_include_dir: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[Path, tuple[_cxx.Result, Path]]:
    """Each lesson built by compiler `cxx`, in parallel: the compile result and the binary."""
    folder = tmp_path_factory.mktemp(f"lessons-{Path(cxx).name}")

    def build(lesson: Path) -> tuple[_cxx.Result, Path]:
        binary = folder / lesson.stem
        command = [cxx, "-std=c++17", f"-I{spio_include_dir}", f"-I{_cxx.HARNESS_DIR}"]
        command += ["-include", str(generated[lesson]), str(lesson), "-o", str(binary)]
        return _cxx.run(command), binary

    return dict(zip(LESSONS, _cxx.parallel_map(build, LESSONS), strict=True))


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda path: path.stem)
def test_lesson(lesson: Path, built: dict[Path, tuple[_cxx.Result, Path]]) -> None:
    """The lesson compiles and all its checks pass."""
    compiled, binary = built[lesson]
    assert compiled.ok, compiled.describe()
    result = _cxx.run([binary])
    assert result.ok, result.describe()
    assert ", 0 failed" in result.output


def test_there_are_five_lessons() -> None:
    assert [lesson.name[:2] for lesson in LESSONS] == ["01", "02", "03", "04", "05"]
