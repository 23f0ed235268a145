"""Generators: the container a kernel's spec.py fills and hands to generate()."""

from __future__ import annotations

import pytest

from spio.dims import (
    Dim,
    Dims,
    Fold,
    Generators,
    Spec,
    SpecNameError,
    SpecTypeError,
    Strides,
    Swizzle,
    Tensor,
    dtype,
    generate,
)


def test_factories_make_add_and_return() -> None:
    gen = Generators()
    fold = gen.Fold("block_i", "i", 64)
    tensor = gen.Tensor("A", gen.dtype.uint4, gen.Dims(k16=4, i=64, k8=2), constant=True)
    assert fold == Fold("block_i", "i", 64)
    assert tensor == Tensor("A", dtype.uint4, Dims(k16=4, i=64, k8=2), constant=True)
    assert list(gen) == [fold, tensor]
    assert gen.A is tensor
    assert gen["block_i"] is fold
    assert "A" in gen
    assert "B" not in gen
    assert len(gen) == 2


def test_every_spec_class_has_a_factory() -> None:
    gen = Generators()
    swizzle = gen.Swizzle("SmemSwizzle", "i", "k8", "swizzle", cells=4)
    assert swizzle == Swizzle("SmemSwizzle", "i", "k8", "swizzle", cells=4)
    assert gen.SmemSwizzle is swizzle
    assert Generators.Swizzle is Swizzle


def test_plain_helpers_are_the_package_names() -> None:
    gen = Generators()
    assert gen.Dims is Dims
    assert gen.Strides is Strides
    assert gen.dtype is dtype
    assert gen.dtype.uint4 is dtype.uint4
    # On the class, the factories are the spec classes themselves.
    assert Generators.Tensor is Tensor


def test_attribute_assignment_adds_the_spec() -> None:
    gen = Generators()
    gen.A = Tensor("A", dtype.float, Dims(i=16, k=32))
    gen.i = Dim("i")
    assert [spec.name for spec in gen] == ["A", "i"]


def test_generate_takes_generators_in_insertion_order() -> None:
    gen = Generators()
    gen.Tensor("Z", dtype.float, Dims(i=2))
    gen.Tensor("A", dtype.float, Dims(i=2))
    header = generate(gen)
    assert header.index("using Z") < header.index("using A")
    assert gen.generate(source="k.cu") == generate(list(gen), source="k.cu")


def test_constructor_takes_specs() -> None:
    specs: list[Spec] = [Dim("i"), Tensor("A", dtype.float, Dims(i=2))]
    assert list(Generators(*specs)) == specs


def test_adding_an_equal_spec_again_is_a_no_op() -> None:
    gen = Generators()
    gen.Dim("i")
    gen.add(Dim("i"))
    gen.i = Dim("i")
    assert list(gen) == [Dim("i")]


def test_a_different_spec_under_a_held_name_is_refused() -> None:
    gen = Generators()
    gen.Tensor("A", dtype.float, Dims(i=2))
    with pytest.raises(SpecNameError, match="two specs are named 'A'"):
        gen.Tensor("A", dtype.float, Dims(i=3))
    with pytest.raises(SpecNameError, match="two specs are named 'A'"):
        gen.A = Tensor("A", dtype.half, Dims(i=2))


def test_attribute_must_match_the_spec_name() -> None:
    gen = Generators()
    with pytest.raises(SpecNameError, match="attribute 'B' of Generators must hold the spec"):
        gen.B = Tensor("A", dtype.float, Dims(i=2))
    assert len(gen) == 0


def test_only_specs_can_be_assigned_or_added() -> None:
    gen = Generators()
    with pytest.raises(SpecTypeError, match="attributes hold specs"):
        gen.x = 3
    with pytest.raises(SpecTypeError, match="Generators holds specs"):
        gen.add(Dims(i=2))  # type: ignore[arg-type]


def test_method_names_are_reachable_by_item_only() -> None:
    gen = Generators()
    spec = Tensor("Tensor", dtype.float, Dims(i=2))
    with pytest.raises(SpecNameError, match="is a method of Generators"):
        gen.Tensor = spec  # type: ignore[assignment]
    gen.add(spec)
    assert gen["Tensor"] is spec


def test_missing_attribute() -> None:
    with pytest.raises(AttributeError, match="no spec named 'nope'"):
        _ = Generators().nope


def test_repr_lists_the_specs() -> None:
    assert repr(Generators(Dim("i"))) == "Generators(Dim(name='i'))"
