"""Spec values: frozen, hashable, and spelled the way the seeds spell them."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from spio.dims import (
    Checkerboard,
    CompoundIndex,
    Dim,
    Dims,
    DType,
    Fold,
    Fragment,
    Generators,
    Spec,
    Strides,
    Swizzle,
    Tensor,
    dtype,
)

SPECS = [
    Dim("i"),
    Fold("block_i", "i", 64),
    Tensor("A", dtype.float, Dims(i=16, k=32), Strides(i=64)),
    CompoundIndex("BlockIndex", Dims(i16=32, j16=32)),
    Checkerboard("SmemChecker", "i", "k8", "checkers", banks=8),
    Swizzle("SmemSwizzle", "i", "k8", "swizzle", cells=8),
    Fragment("AFrag", "m16n8k16.a", dtype.half, "i", "k"),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: type(spec).__name__)
def test_specs_are_frozen_and_hashable(spec: Spec) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "other"  # type: ignore[misc]
    twin = dataclasses.replace(spec)
    assert twin == spec
    assert hash(twin) == hash(spec)
    assert {spec: 1}[twin] == 1


def test_dims_keep_the_given_order_and_resolve_minus_one() -> None:
    dims = Dims(k8=4, i=4, k=-1)
    assert dims.items == (("k8", 4), ("i", 4), ("k", 8))
    assert dims.keys() == ("k8", "i", "k")
    assert list(dims) == ["k8", "i", "k"]
    assert (dims["k"], len(dims), "i" in dims, "j" in dims) == (8, 3, True, False)
    assert repr(dims) == "Dims(k8=4, i=4, k=8)"
    assert dims == Dims(k8=4, i=4, k=8) == Dims.from_items([("k8", 4), ("i", 4), ("k", -1)])
    assert dims != Dims(i=4, k8=4, k=8)
    with pytest.raises(KeyError):
        dims["j"]


def test_dims_keys_may_be_any_dimension_name() -> None:
    # Python's own parameter names are dimension names like any other.
    assert Dims(self=2, items=3).keys() == ("self", "items")
    assert Strides(self=2).get("self") == 2


def test_fold_chains_derive_every_minus_one() -> None:
    assert Dims(k32=2, k8=-1, k2=-1, k=-1).items == (("k32", 2), ("k8", 4), ("k2", 4), ("k", 2))


def test_strides() -> None:
    strides = Strides(i=64, k=2)
    assert strides.keys() == ("i", "k")
    assert (strides.get("i"), strides.get("j"), len(strides)) == (64, None, 2)
    assert repr(strides) == "Strides(i=64, k=2)"
    assert Strides.from_items([("i", 64), ("k", 2)]) == strides


def test_seed_spellings() -> None:
    # From the tutorial and the "Typed Tensors" seed.
    assert Tensor("A", dtype.float, Dims(i=16, k=32), Strides(i=64)).strides == Strides(i=64)
    gen = Generators()
    tensor = gen.Tensor("A", gen.dtype.uint4, gen.Dims(k16=4, i=64, k8=2), constant=True)
    assert tensor.constant
    assert gen.Fold("block_i", "i", 128).cpp_name == "BLOCK_I"
    assert Dim("checkers").cpp_name == "CHECKERS"


def test_tensor_dtype_spellings() -> None:
    fragment = Fragment("AFrag", "m16n8k16.a", "half", "i", "k")  # type: ignore[arg-type]
    assert fragment.dtype is dtype.half
    assert Tensor("A", "uint4", Dims(i=2)).dtype is dtype.uint4
    assert Tensor("T", fragment, Dims(i=2)).dtype is fragment
    assert Tensor("T", "AFrag", Dims(i=2)).dtype == "AFrag"


def test_dtype_enumeration() -> None:
    assert dtype is DType
    assert repr(dtype.half) == "dtype.half"
    assert dtype.bfloat16.cpp == "__nv_bfloat16"
    assert [member.name for member in dtype][:3] == ["float", "double", "half"]


def test_generators_factories_keep_the_spec_signature() -> None:
    gen = Generators()
    assert inspect.signature(gen.Tensor) == inspect.signature(Tensor)
    assert gen.Fragment.__doc__ == Fragment.__doc__
