"""Line breaking of emitted declarations, matching clang-format under the repo style.

Emitted headers must pass `clang-format --dry-run -Werror` (Google style, IndentWidth 4,
ColumnLimit 100), so declarations that do not fit one line are broken exactly as
clang-format would break them. clang-format picks the layout of least penalty; for the
few shapes emitted here that search reduces to comparing four layouts of a `using`
declaration with the penalties below, which were fitted to clang-format's choices and are
checked against the real binary by the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

COLUMN_LIMIT = 100
CONTINUATION = 4

# Penalties of one line break: after `=`, after the template's `<`, and between two
# template arguments (clang-format's split penalties grow with nesting depth), plus the
# one-off cost of the first break inside the argument list.
_BREAK_AFTER_ASSIGN = 37
_BREAK_AFTER_OPEN = 420
_BREAK_BETWEEN_ARGS = 261
_FIRST_INNER_BREAK = 15
_EXCESS_CHARACTER = 1_000_000


def pack(column: int, args: Sequence[str], closer: str) -> list[str]:
    """Fill lines greedily with `args`, each line starting at `column`; the last gets `closer`.

    A line always takes at least one argument, even one that overflows the limit.
    """
    lines: list[str] = []
    line = ""
    for position, arg in enumerate(args):
        piece = arg + ("," if position < len(args) - 1 else closer)
        if not line:
            line = piece
        elif column + len(line) + 1 + len(piece) <= COLUMN_LIMIT:
            line += " " + piece
        else:
            lines.append(line)
            line = piece
    lines.append(line)
    return lines


def _excess(text: str) -> int:
    return sum(max(0, len(line) - COLUMN_LIMIT) for line in text.split("\n"))


def using_declaration(name: str, template: str, args: Sequence[str]) -> str:
    """Return `using name = template<args...>;`, broken as clang-format breaks it."""
    one_line = f"using {name} = {template}<{', '.join(args)}>;"
    if len(one_line) <= COLUMN_LIMIT:
        return one_line
    candidates: list[tuple[int, int, int, str]] = []
    for break_assign in (0, 1):
        if break_assign:
            start, column = f"using {name} =\n{' ' * CONTINUATION}", CONTINUATION
        else:
            start, column = f"using {name} = ", len(f"using {name} = ")
        head = f"{template}<"
        for break_open in (0, 1):
            if break_open:
                # Continuation lines indent from the start of the statement's line.
                arg_column = CONTINUATION * (1 + break_assign)
                lines = pack(arg_column, args, ">;")
                body = head + "".join(f"\n{' ' * arg_column}{line}" for line in lines)
            else:
                arg_column = column + len(head)
                lines = pack(arg_column, args, ">;")
                body = head + f"\n{' ' * arg_column}".join(lines)
            text = start + body
            arg_breaks = len(lines) - 1
            penalty = (
                break_assign * _BREAK_AFTER_ASSIGN
                + break_open * _BREAK_AFTER_OPEN
                + arg_breaks * _BREAK_BETWEEN_ARGS
                + (_FIRST_INNER_BREAK if arg_breaks + break_open else 0)
                + _excess(text) * _EXCESS_CHARACTER
            )
            candidates.append((penalty, break_assign, break_open, text))
    return min(candidates)[3]


def struct_declaration(name: str, template: str, args: Sequence[str], constructor: str) -> str:
    """Return a struct deriving from `template<args...>` that inherits its constructors."""
    base = f"{template}<{', '.join(args)}>"
    head = f"struct {name} : {base} {{"
    if len(head) > COLUMN_LIMIT:
        opener = f"{' ' * CONTINUATION}: {template}<"
        lines = pack(len(opener), args, "> {")
        head = f"struct {name}\n{opener}" + f"\n{' ' * len(opener)}".join(lines)
    using = f"{' ' * CONTINUATION}using {base}::{constructor};"
    if len(using) > COLUMN_LIMIT:
        opener = f"{' ' * CONTINUATION}using {template}<"
        lines = pack(len(opener), args, f">::{constructor};")
        using = opener + f"\n{' ' * len(opener)}".join(lines)
    return f"{head}\n{using}\n}};"
