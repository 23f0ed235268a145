"""Generators: a kernel's specs, collected in the order its spec.py writes them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, Generic, ParamSpec, TypeVar

from ._checkerboard import Checkerboard
from ._compound_index import CompoundIndex
from ._dim import Dim, Fold
from ._dims import Dims, Strides
from ._dtype import DType
from ._emit import SPEC_KINDS, SPEC_TYPES, Spec, generate
from ._errors import SpecNameError, SpecTypeError
from ._fragment import Fragment
from ._swizzle import Swizzle
from ._tensor import Tensor

_P = ParamSpec("_P")
_S = TypeVar("_S", bound=Spec)


class _Registering(Generic[_P, _S]):
    """A spec class seen through a Generators: calling it also adds the spec.

    On the class itself (`Generators.Tensor`) it is the plain spec class.
    """

    def __init__(self, factory: Callable[_P, _S]) -> None:
        self._factory = factory

    def __get__(self, owner: Generators | None, owner_type: type | None = None) -> Callable[_P, _S]:
        if owner is None:
            return self._factory
        factory = self._factory

        # wraps() keeps the spec class's name, docstring and signature for help() and IDEs.
        @functools.wraps(factory)
        def register(*args: _P.args, **kwargs: _P.kwargs) -> _S:
            spec = factory(*args, **kwargs)
            owner.add(spec)
            return spec

        return register


class Generators:
    """Collect the specs of one header, by name, in the order they are added.

    A kernel's `spec.py` builds one and hands it to `generate`:

        gen = Generators()
        gen.Fold("block_i", "i", 64)                       # makes, adds and returns
        gen.A = Tensor("A", gen.dtype.uint4, gen.Dims(k16=4, i=64, k8=2), constant=True)
        gen.Tensor("C", gen.dtype.float, gen.Dims(i=64, j=64))
        header = generate(gen)                             # or gen.generate()

    `gen.Dim`, `gen.Fold`, `gen.Tensor`, `gen.CompoundIndex`, `gen.Checkerboard`,
    `gen.Swizzle` and `gen.Fragment` take the arguments of the spec classes of the same
    names; each makes the spec, adds it, and returns it. Assigning a spec to an attribute
    adds it too; the attribute must be the spec's name. `gen.Dims`, `gen.Strides` and
    `gen.dtype` are the plain `Dims`, `Strides` and `dtype`, so a spec.py needs one import.

    Read a spec back with `gen.A` or `gen["A"]` (the latter also for names that are
    methods here, like "Tensor"). Iterating yields the specs in the order added, which is
    the order `generate` declares them in. Adding a spec equal to one already held under
    its name does nothing; adding a different spec under a held name raises SpecNameError.
    """

    Dim = _Registering(Dim)
    Fold = _Registering(Fold)
    Tensor = _Registering(Tensor)
    CompoundIndex = _Registering(CompoundIndex)
    Checkerboard = _Registering(Checkerboard)
    Swizzle = _Registering(Swizzle)
    Fragment = _Registering(Fragment)
    Dims = Dims
    Strides = Strides
    dtype = DType

    _specs: dict[str, Spec]

    def __init__(self, *specs: Spec) -> None:
        object.__setattr__(self, "_specs", {})
        self.add(*specs)

    def add(self, *specs: Spec) -> None:
        """Add specs in order; see the class docstring for repeated names."""
        held: dict[str, Spec] = self._specs
        for spec in specs:
            if not isinstance(spec, SPEC_TYPES):
                raise SpecTypeError(f"Generators holds specs ({SPEC_KINDS}); got {spec!r}")
            existing = held.get(spec.name)
            if existing is None:
                held[spec.name] = spec
            elif existing != spec:
                raise SpecNameError(
                    f"two specs are named {spec.name!r}: {existing!r} and {spec!r}; names "
                    "must be unique"
                )

    def generate(self, *, source: str | None = None) -> str:
        """Return the header that declares the specs held here; see `spio.dims.generate`."""
        return generate(self, source=source)

    def __setattr__(self, attribute: str, value: Any) -> None:
        if not isinstance(value, SPEC_TYPES):
            raise SpecTypeError(
                f"Generators attributes hold specs; got {value!r} for {attribute!r}"
            )
        if hasattr(type(self), attribute):
            raise SpecNameError(
                f"{attribute!r} is a method of Generators; add a spec of that name with "
                "add() and read it back with gen[name]"
            )
        if attribute != value.name:
            raise SpecNameError(
                f"attribute {attribute!r} of Generators must hold the spec named "
                f"{attribute!r}; got {value!r}"
            )
        self.add(value)

    def __getattr__(self, attribute: str) -> Spec:
        # Only called for names that are not methods or instance state.
        specs: dict[str, Spec] = object.__getattribute__(self, "_specs")
        if attribute in specs:
            return specs[attribute]
        raise AttributeError(f"Generators holds no spec named {attribute!r}")

    def __getitem__(self, name: str) -> Spec:
        return self._specs[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[Spec]:
        return iter(tuple(self._specs.values()))

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Generators({', '.join(map(repr, self._specs.values()))})"
