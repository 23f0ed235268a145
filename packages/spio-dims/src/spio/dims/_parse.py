"""Read specs from `/*@spio [ ... ] @spio*/` blocks of a C++/CUDA source, without running it.

A block is parsed with `ast` and interpreted by a whitelist: a list (or tuple) of calls of
the generator names with literal arguments. Nothing in a block is executed, so a source
file from anywhere can be turned into a header safely.
"""

from __future__ import annotations

import ast
import inspect
import os
from collections.abc import Callable
from pathlib import Path

from ._checkerboard import Checkerboard
from ._compound_index import CompoundIndex
from ._dim import Dim, Fold
from ._dims import Dims, Strides
from ._dtype import DType, allowed_dtypes
from ._emit import SPEC_TYPES, Spec, generate
from ._errors import DimsError, DtypeError, SpecError, SpecSyntaxError, SpecTypeError
from ._fragment import Fragment
from ._swizzle import Swizzle
from ._tensor import Tensor

BLOCK_START = "/*@spio"
BLOCK_END = "@spio*/"

_CALLABLES: dict[str, Callable[..., object]] = {
    "Dim": Dim,
    "Fold": Fold,
    "Dims": Dims,
    "Strides": Strides,
    "Tensor": Tensor,
    "CompoundIndex": CompoundIndex,
    "Checkerboard": Checkerboard,
    "Swizzle": Swizzle,
    "Fragment": Fragment,
}
_ALLOWED = (
    "a block holds a list of calls of "
    f"{', '.join(_CALLABLES)} with literal arguments (int, str, True, False, None, "
    "dtype.X, nested calls)"
)
# What to call a node that is refused, for the error message.
_REFUSED: dict[type[ast.AST], str] = {
    ast.Name: "a variable",
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripting",
    ast.BinOp: "arithmetic",
    ast.UnaryOp: "an operator",
    ast.BoolOp: "a boolean operator",
    ast.Compare: "a comparison",
    ast.IfExp: "a conditional expression",
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment",
    ast.Starred: "unpacking",
    ast.List: "a list argument",
    ast.Tuple: "a tuple argument",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "a slice",
}
_SNIPPET = 60


def parse(source: str, filename: str = "<string>") -> tuple[Spec, ...]:
    """Return the specs of every `@spio` block in `source`, blocks concatenated in order.

    Each block is `/*@spio` followed by a Python list (or tuple) of generator calls and
    `@spio*/`; a trailing comma is fine. Only the generator names (`Dim`, `Fold`, `Dims`,
    `Strides`, `Tensor`, `CompoundIndex`, `Checkerboard`, `Swizzle`, `Fragment`) may be
    called, and only with literals (int, negative int, str, bool, None), `dtype.X`, and
    nested calls. Anything else raises SpecSyntaxError; invalid specs raise their SpecError
    subclass. Errors carry `filename` and the line in `source` (not in the block).
    """
    if not isinstance(source, str):
        raise TypeError(
            f"source must be a str, got {type(source).__name__} (parse_file reads files)"
        )
    return tuple(spec for spec, _ in _parse_located(source, filename)[1])


def parse_file(path: str | os.PathLike[str]) -> tuple[Spec, ...]:
    """Return the specs of the `@spio` blocks of the UTF-8 file at `path`; see `parse`."""
    return parse(Path(path).read_text(encoding="utf-8"), os.fspath(path))


def generate_file(path: str | os.PathLike[str]) -> str:
    """Return the header for the `@spio` blocks of the file at `path`.

    The header's source line names the file (its base name, so the bytes do not depend on
    where the checkout is). Raise SpecSyntaxError if the file has no block, and a
    SpecError subclass placed at the file and line of the offending spec otherwise.
    """
    filename = os.fspath(path)
    text = Path(path).read_text(encoding="utf-8")
    return generate_source(text, filename, source=Path(path).name)


def generate_source(text: str, filename: str, source: str | None) -> str:
    """Parse `text` and generate its header, placing every error at `filename:line`."""
    blocks, located = _parse_located(text, filename)
    if not blocks:
        raise SpecSyntaxError(
            f"no {BLOCK_START} ... {BLOCK_END} block found; write the specs in one, like "
            f'{BLOCK_START} [Dim("i")] {BLOCK_END}',
            filename=filename,
        )
    try:
        return generate([spec for spec, _ in located], source=source)
    except SpecError as error:
        line = None if error.spec_index is None else located[error.spec_index][1]
        raise error.located(filename, line) from None


def _parse_located(source: str, filename: str) -> tuple[int, list[tuple[Spec, int]]]:
    """Return (number of blocks, [(spec, line)]) for the blocks of `source`."""
    specs: list[tuple[Spec, int]] = []
    blocks = 0
    position = 0
    while (start := source.find(BLOCK_START, position)) >= 0:
        body_start = start + len(BLOCK_START)
        line = source.count("\n", 0, start) + 1
        follower = source[body_start : body_start + 1]
        if follower.isidentifier() or follower.isdigit():
            # "/*@spiox": some other tag, not a block.
            position = body_start
            continue
        end = source.find(BLOCK_END, body_start)
        if end < 0:
            raise SpecSyntaxError(
                f"{BLOCK_START} block is not closed; end it with {BLOCK_END}",
                filename=filename,
                lineno=line,
            )
        specs += _Block(source[body_start:end], filename, line).specs()
        blocks += 1
        position = end + len(BLOCK_END)
    return blocks, specs


class _Block:
    """One block's text and where it starts in its file."""

    def __init__(self, text: str, filename: str, line: int) -> None:
        stripped = text.lstrip()
        # ast wants the expression at column 0; keep line numbers true to the file.
        self.first_line = line + text[: len(text) - len(stripped)].count("\n")
        self.text = stripped
        self.filename = filename

    def error(self, message: str, node: ast.AST | None = None, line: int = 1) -> SpecSyntaxError:
        lineno = getattr(node, "lineno", line) if node is not None else line
        return SpecSyntaxError(message, filename=self.filename, lineno=self.line(lineno))

    def line(self, block_line: int) -> int:
        return self.first_line + block_line - 1

    def snippet(self, node: ast.AST) -> str:
        text = ast.get_source_segment(self.text, node) or type(node).__name__
        text = " ".join(text.split())
        return text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."

    def specs(self) -> list[tuple[Spec, int]]:
        if not self.text.strip():
            raise self.error(
                'empty @spio block; write a list of specs, like [Dim("i")], or []',
                line=1,
            )
        try:
            tree = ast.parse(self.text, filename=self.filename, mode="eval")
        except SyntaxError as error:
            raise self.error(
                f"invalid Python in @spio block: {error.msg}", line=error.lineno or 1
            ) from None
        except (ValueError, RecursionError, MemoryError) as error:
            raise self.error(f"@spio block cannot be parsed: {error}") from None
        body = tree.body
        if not isinstance(body, ast.List | ast.Tuple):
            raise self.error(
                f'a @spio block is a list of specs, like [Dim("i")]; got {self.snippet(body)}',
                body,
            )
        specs: list[tuple[Spec, int]] = []
        for element in body.elts:
            value = self.value(element)
            if not isinstance(value, SPEC_TYPES):
                raise self.error(
                    f"{self.snippet(element)} is not a spec; the list holds Dim, Fold, Tensor, "
                    "CompoundIndex, Checkerboard, Swizzle and Fragment calls (Dims and "
                    "Strides go inside them)",
                    element,
                )
            specs.append((value, self.line(element.lineno)))
        return specs

    def value(self, node: ast.expr) -> object:
        """Return the value of an allowed node; raise SpecSyntaxError for any other."""
        if isinstance(node, ast.Constant):
            if node.value is None or type(node.value) in (int, str, bool):
                return node.value
            raise self.error(f"the literal {self.snippet(node)} is not allowed; {_ALLOWED}", node)
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int
        ):
            return -node.operand.value
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "dtype"
        ):
            # Looked up in the enumeration's table, never with getattr: dtype.__class__
            # is just an unknown dtype.
            member = DType.__members__.get(node.attr)
            if member is None:
                raise DtypeError(
                    f"unknown dtype {self.snippet(node)}; allowed: {allowed_dtypes()}",
                    filename=self.filename,
                    lineno=self.line(node.lineno),
                )
            return member
        if isinstance(node, ast.Call):
            return self.call(node)
        what = _REFUSED.get(type(node), type(node).__name__)
        raise self.error(f"{self.snippet(node)} is not allowed ({what}); {_ALLOWED}", node)

    def call(self, node: ast.Call) -> object:
        """Return the spec (or Dims, Strides) that an allowed call makes."""
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in _CALLABLES):
            name = func.id if isinstance(func, ast.Name) else self.snippet(func)
            raise self.error(f"calling {name} is not allowed; {_ALLOWED}", node)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.error(f"{self.snippet(arg)} is not allowed (unpacking)", arg)
            args.append(self.value(arg))
        kwargs: dict[str, object] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.error(
                    f"**{self.snippet(keyword.value)} is not allowed (unpacking); {_ALLOWED}",
                    keyword.value,
                )
            if keyword.arg in kwargs:
                if func.id in ("Dims", "Strides"):
                    raise DimsError(
                        f"duplicate dimension {keyword.arg!r} in {func.id}; each key may "
                        "appear once",
                        filename=self.filename,
                        lineno=self.line(keyword.lineno),
                    )
                raise self.error(f"{func.id}() got argument {keyword.arg!r} twice", keyword)
            kwargs[keyword.arg] = self.value(keyword.value)
        too_many = _too_many_positional(func.id, len(args))
        if too_many is not None:
            raise SpecTypeError(
                f"{func.id}(...): {too_many}",
                filename=self.filename,
                lineno=self.line(node.lineno),
            )
        try:
            return _CALLABLES[func.id](*args, **kwargs)
        except SpecError as error:
            raise error.located(self.filename, self.line(node.lineno)) from None
        except TypeError as error:
            # A call that does not fit the signature: missing or unknown arguments.
            message = str(error).replace(f"{func.id}.__init__() ", "")
            raise SpecTypeError(
                f"{func.id}(...): {message}",
                filename=self.filename,
                lineno=self.line(node.lineno),
            ) from None


def _too_many_positional(name: str, given: int) -> str | None:
    """Say that `given` positional arguments are too many for `name`, or return None.

    Python's own message counts `self` (Tensor "takes from 4 to 6 positional arguments but 7
    were given" for 6); the signature of the class does not.
    """
    parameters = inspect.signature(_CALLABLES[name]).parameters.values()
    positional = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
    if given <= len(positional):
        return None
    if not positional:
        return f"takes keyword arguments only, like {name}(i=4); got {_count(given)}"
    return f"takes at most {_count(len(positional))} ({', '.join(positional)}); got {given}"


def _count(number: int) -> str:
    return f"{number} positional argument{'' if number == 1 else 's'}"
