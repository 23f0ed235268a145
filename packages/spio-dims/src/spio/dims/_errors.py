"""Typed errors of the generator: each says what was given, what is allowed, and where."""

from __future__ import annotations

from typing import Self


class SpecError(ValueError):
    """An invalid spec.

    `message` says what was given and what is allowed. `filename` and `lineno` say where,
    when the spec came from a `@spio` block (line numbers count from the top of the file).
    `spec_index` is the position of the offending spec in the list given to `generate`,
    when the error is about one spec of the list; `generate_file` turns it into a line.
    """

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        lineno: int | None = None,
        spec_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.spec_index = spec_index

    @property
    def location(self) -> str | None:
        """Return `file:line` (or `file` alone) when known, else None."""
        if self.filename is None:
            return None
        if self.lineno is None:
            return self.filename
        return f"{self.filename}:{self.lineno}"

    def __str__(self) -> str:
        location = self.location
        return self.message if location is None else f"{location}: {self.message}"

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only fields would be lost by the default pickling of exceptions.
        return (_rebuild, (type(self), self.message, self.filename, self.lineno, self.spec_index))

    def located(self, filename: str, lineno: int | None) -> Self:
        """Return a copy of this error placed at `filename:lineno` (kept if already placed)."""
        if self.filename is not None:
            return self
        return type(self)(
            self.message, filename=filename, lineno=lineno, spec_index=self.spec_index
        )

    def at_index(self, spec_index: int) -> Self:
        """Return a copy of this error that blames the spec at `spec_index` of the list."""
        if self.spec_index is not None:
            return self
        return type(self)(
            self.message, filename=self.filename, lineno=self.lineno, spec_index=spec_index
        )


def _rebuild(
    cls: type[SpecError],
    message: str,
    filename: str | None,
    lineno: int | None,
    spec_index: int | None,
) -> SpecError:
    return cls(message, filename=filename, lineno=lineno, spec_index=spec_index)


class SpecSyntaxError(SpecError):
    """A `@spio` block that is not a list of generator calls with literal arguments."""


class SpecNameError(SpecError):
    """A name that is not a valid identifier, is a C++/CUDA keyword, or collides with another."""


class DimsError(SpecError):
    """Sizes, folds or strides that are out of range or inconsistent with each other."""


class DtypeError(SpecError):
    """An unknown data type, or one that the spec does not accept (fragment operands)."""


class SpecTypeError(SpecError, TypeError):
    """An argument of the wrong Python type (a str where a size goes, a bool as a size, ...)."""
