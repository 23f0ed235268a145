"""The `spio-dims` command: generate headers from @spio blocks, locate the C++ headers."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._errors import SpecError
from ._include import include_dir
from ._parse import generate_source
from ._version import __version__

PROG = "spio-dims"
EXIT_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Generate typed-dimension C++ headers from /*@spio ... @spio*/ blocks.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    gen = commands.add_parser(
        "gen",
        help="write the header for the @spio blocks of FILE",
        description="Write the header declaring the specs of FILE's @spio blocks.",
    )
    gen.add_argument("file", metavar="FILE", help="C++/CUDA source with @spio blocks ('-': stdin)")
    gen.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="header to write ('-' or none: stdout); a symlink is written through, and a "
        "regular file is left untouched when already up to date",
    )
    commands.add_parser(
        "include-dir",
        help="print the directory of the spio C++ headers (for -I)",
        description="Print the directory that holds spio/spio.h.",
    )
    return parser


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _gen(file: str, output: str | None) -> int:
    if file == "":
        return _fail("FILE is an empty path ''; give the source file, or '-' to read stdin")
    if output == "":
        return _fail("OUT is an empty path ''; give the header file, or '-' for stdout")
    try:
        if file == "-":
            header = generate_source(sys.stdin.read(), "<stdin>", source=None)
        else:
            text = Path(file).read_text(encoding="utf-8")
            header = generate_source(text, file, source=Path(file).name)
    except SpecError as error:
        return _fail(str(error))
    except UnicodeDecodeError as error:
        return _fail(f"{file}: not UTF-8 text ({error.reason} at byte {error.start})")
    except OSError as error:
        return _fail(f"{file}: {error.strerror or error}")
    if output is None or output == "-":
        sys.stdout.write(header)
        return 0
    if file != "-" and Path(output).resolve() == Path(file).resolve():
        return _fail(f"{output}: is FILE itself; the header would replace its @spio blocks")
    data = header.encode("utf-8")
    try:
        if _is_missing_or_regular(output):
            # Through any symlinks: replacing a link would leave the file it names stale.
            target = Path(os.path.realpath(output))
            # Rewriting identical bytes would only make build systems rebuild.
            if target.is_file() and target.read_bytes() == data:
                return 0
            _replace(target, data)
        else:
            # A device, FIFO or terminal (/dev/null, /dev/stdout) is written to; replacing it
            # with a regular file would break everything else that writes there.
            with open(output, "wb") as stream:
                stream.write(data)
    except OSError as error:
        return _fail(f"{output}: {error.strerror or error}")
    return 0


def _is_missing_or_regular(path: str) -> bool:
    """Whether what path names, through symlinks, is a regular file or nothing yet."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def _replace(target: Path, data: bytes) -> None:
    """Write data to target through a temporary file beside it, so that a build reading
    target (or an interrupted write) never sees half a header."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        # mkstemp's file is private (0600); a header keeps the mode it had, or a plain file's.
        mode = target.stat().st_mode & 0o777 if target.is_file() else 0o644
        os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _include_dir() -> int:
    path = include_dir()
    if not (path / "spio" / "spio.h").is_file():
        return _fail(f"{path}: no spio/spio.h there; the spio-dims install is incomplete")
    print(path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `spio-dims` with `argv` (default: the command line); return the exit status.

    Spec and file errors print `spio-dims: error: <file>:<line>: message` and return 2;
    usage errors exit 2 through argparse.
    """
    args = _parser().parse_args(argv)
    if args.command == "gen":
        return _gen(args.file, args.output)
    return _include_dir()


if __name__ == "__main__":
    sys.exit(main())
