"""Invalid specs raise typed errors that say what was given and what is allowed."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest

from spio.dims import (
    Checkerboard,
    CompoundIndex,
    Dim,
    Dims,
    DimsError,
    DtypeError,
    Fold,
    Fragment,
    SpecError,
    SpecNameError,
    SpecTypeError,
    Strides,
    Swizzle,
    Tensor,
    dtype,
    generate,
)

F = dtype.float

# (case id, the call that must fail, the error type, fragments its message must contain)
CASES: list[tuple[str, Callable[[], object], type[Exception], tuple[str, ...]]] = [
    # Dims: sizes.
    ("zero size", lambda: Dims(i=0), DimsError, ("size of 'i' is 0", "from 1 to 2147483647")),
    ("negative size", lambda: Dims(i=-2), DimsError, ("size of 'i' is -2", "or -1")),
    ("huge size", lambda: Dims(i=2**31), DimsError, ("2147483648", "from 1 to 2147483647")),
    ("bool size", lambda: Dims(i=True), SpecTypeError, ("must be an int", "bool True")),
    ("str size", lambda: Dims(i="4"), SpecTypeError, ("must be an int", "str '4'")),  # type: ignore[arg-type]
    ("float size", lambda: Dims(i=4.0), SpecTypeError, ("must be an int", "float 4.0")),  # type: ignore[arg-type]
    ("empty dims", lambda: Dims(), DimsError, ("at least one dimension",)),
    # Dims: folds and -1.
    (
        "fold size disagrees with dimension",
        lambda: Dims(k8=4, k=5),
        DimsError,
        ("inconsistent sizes of dimension 'k'", "k=5", "one K8 is 8 K", "must have size 8"),
    ),
    (
        "two folds disagree",
        lambda: Dims(k16=4, k8=3),
        DimsError,
        ("k8=3", "one K16 is 2 K8", "must have size 2"),
    ),
    (
        "fold does not divide",
        lambda: Dims(k8=4, k3=2),
        DimsError,
        ("fold 'k3' does not divide 'k8'", "8 is not a multiple of 3"),
    ),
    (
        "-1 without a larger fold",
        lambda: Dims(i=4, k=-1),
        DimsError,
        ("size of 'k' is -1", "no larger fold of 'k'"),
    ),
    (
        "-1 on the coarsest fold",
        lambda: Dims(k8=-1, k=-1),
        DimsError,
        ("size of 'k8' is -1",),
    ),
    (
        "duplicate dimension",
        lambda: Dims.from_items([("k", 4), ("i", 2), ("k", 4)]),
        DimsError,
        ("duplicate dimension 'k' in Dims",),
    ),
    (
        "malformed item",
        lambda: Dims.from_items([("k", 4, 1)]),  # type: ignore[list-item]
        SpecTypeError,
        ("(key, int) pairs",),
    ),
    # Dims keys.
    ("upper-case key", lambda: Dims(I=4), SpecNameError, ("dimension key 'I'", "lower-case")),
    ("keyword key", lambda: Dims(int=4), SpecNameError, ("'int' is a C++ keyword",)),
    ("keyword base of a fold", lambda: Dims(int8=4), SpecNameError, ("'int' is a C++ keyword",)),
    ("fold by one", lambda: Dims(k1=4), SpecNameError, ("folds 'k' by 1", "write 'k'")),
    ("leading zero", lambda: Dims(k08=4), SpecNameError, ("fold factor '08'",)),
    ("double underscore", lambda: Dims(a__b=4), SpecNameError, ("contains '__'",)),
    ("macro dim", lambda: Dims(eof=4), SpecNameError, ("C++ type EOF", "macro")),
    (
        "too long",
        lambda: Dims.from_items([("x" * 33, 2)]),
        SpecNameError,
        ("has 33 characters", "at most 32"),
    ),
    # Strides.
    ("zero stride", lambda: Strides(i=0), DimsError, ("stride of 'i' is 0", "from 1")),
    ("negative stride", lambda: Strides(i=-1), DimsError, ("stride of 'i' is -1",)),
    (
        "stride of a missing dimension",
        lambda: Tensor("A", F, Dims(i=4, k=4), Strides(j=4, i=8)),
        DimsError,
        ("Strides of tensor 'A' name 'j'", "does not have", "dimensions are i, k"),
    ),
    (
        "packed stride overflows int",
        lambda: Tensor("A", F, Dims(h=2, i=65536, j=65536)),
        DimsError,
        ("stride of 'h' in tensor 'A' is 4294967296", "2147483647"),
    ),
    # Dim and Fold names.
    ("dim keyword", lambda: Dim("class"), SpecNameError, ("'class' is a C++ keyword",)),
    ("dim cuda keyword", lambda: Dim("__global__"), SpecNameError, ("is a CUDA keyword",)),
    (
        "dim ending in digits",
        lambda: Dim("k8"),
        SpecNameError,
        ("'k8' ends in digits", "anonymous fold"),
    ),
    ("dim upper-case", lambda: Dim("I"), SpecNameError, ("dimension name 'I' is not allowed",)),
    ("dim not a str", lambda: Dim(3), SpecTypeError, ("must be a str", "int 3")),  # type: ignore[arg-type]
    ("dim macro", lambda: Dim("null"), SpecNameError, ("C++ type NULL", "macro")),
    ("fold name with digits", lambda: Fold("b4", "i", 4), SpecNameError, ("fold name 'b4'",)),
    ("fold of a fold", lambda: Fold("w", "i16", 4), SpecNameError, ("'i16' ends in digits",)),
    ("fold stride zero", lambda: Fold("w", "i", 0), DimsError, ("stride of fold 'w' is 0",)),
    # Spec names.
    ("tensor keyword", lambda: Tensor("int", F, Dims(i=2)), SpecNameError, ("C++ keyword",)),
    (
        "tensor cuda keyword",
        lambda: Tensor("__shared__", F, Dims(i=2)),
        SpecNameError,
        ("'__shared__' is a CUDA keyword",),
    ),
    (
        "tensor invalid identifier",
        lambda: Tensor("my tensor", F, Dims(i=2)),
        SpecNameError,
        ("'my tensor' is not a valid name", "identifier"),
    ),
    (
        "tensor leading digit",
        lambda: Tensor("2A", F, Dims(i=2)),
        SpecNameError,
        ("'2A' is not a valid name",),
    ),
    (
        "tensor shadows a CUDA name",
        lambda: Tensor("threadIdx", F, Dims(i=2)),
        SpecNameError,
        ("already a name at global scope",),
    ),
    (
        "tensor named like a vector type",
        lambda: Tensor("uint4", F, Dims(i=2)),
        SpecNameError,
        ("'uint4'",),
    ),
    (
        "tensor named like a dtype",
        lambda: Tensor("half", F, Dims(i=2)),
        SpecNameError,
        ("name of a dtype",),
    ),
    (
        "tensor named spio",
        lambda: Tensor("spio", F, Dims(i=2)),
        SpecNameError,
        ("already a name at global scope",),
    ),
    # Tensor arguments.
    (
        "unknown dtype object",
        lambda: Tensor("A", 3.5, Dims(i=2)),  # type: ignore[arg-type]
        DtypeError,
        ("dtype of tensor 'A' is 3.5", "allowed: dtype.X", "uint4"),
    ),
    (
        "unknown dtype name",
        lambda: dtype["flaot"],
        DtypeError,
        ("unknown dtype 'flaot'", "allowed: float, double, half"),
    ),
    (
        "dims not Dims",
        lambda: Tensor("A", F, {"i": 2}),  # type: ignore[arg-type]
        SpecTypeError,
        ("must be Dims(...)",),
    ),
    (
        "strides not Strides",
        lambda: Tensor("A", F, Dims(i=2), {"i": 2}),  # type: ignore[arg-type]
        SpecTypeError,
        ("must be Strides(...) or None",),
    ),
    (
        "constant not bool",
        lambda: Tensor("A", F, Dims(i=2), constant=1),  # type: ignore[arg-type]
        SpecTypeError,
        ("must be True or False",),
    ),
    # CompoundIndex, Checkerboard, Swizzle, Fragment.
    (
        "unknown init",
        lambda: CompoundIndex("Idx", Dims(i=2), init="threadIdx.w"),
        SpecError,
        ("init of compound index 'Idx' is 'threadIdx.w'", "threadIdx.x", "blockIdx.z"),
    ),
    (
        "checkerboard repeats a dimension",
        lambda: Checkerboard("C", "i", "i", "checkers"),
        SpecError,
        ("must all differ",),
    ),
    (
        "checkerboard banks",
        lambda: Checkerboard("C", "i", "k8", "checkers", banks=6),
        DimsError,
        ("banks of checkerboard 'C' is 6", "power of two from 2 to 256"),
    ),
    (
        "swizzle repeats a dimension",
        lambda: Swizzle("S", "i", "k8", "i"),
        SpecError,
        ("swizzle 'S' uses 'i', 'k8', 'i'", "must all differ"),
    ),
    (
        "swizzle cells",
        lambda: Swizzle("S", "i", "k8", "swizzle", cells=16),
        DimsError,
        ("cells of swizzle 'S' is 16", "allowed: 2, 4 or 8"),
    ),
    (
        "swizzle cells not an int",
        lambda: Swizzle("S", "i", "k8", "swizzle", cells=True),
        SpecTypeError,
        ("cells of swizzle 'S' must be an int", "bool True"),
    ),
    (
        "swizzle name",
        lambda: Swizzle("2S", "i", "k8", "swizzle"),
        SpecNameError,
        ("swizzle name '2S' is not a valid name",),
    ),
    (
        "swizzle dimension name",
        lambda: Swizzle("S", "i", "K8", "swizzle"),
        SpecNameError,
        ("dimension key 'K8'", "lower-case"),
    ),
    (
        "fragment kind",
        lambda: Fragment("F", "m16n8k32.a", dtype.half, "i", "k"),
        SpecError,
        ("unknown fragment kind 'm16n8k32.a'", "m16n8k8.a", "m16n8k16.c"),
    ),
    (
        "fragment a takes half",
        lambda: Fragment("F", "m16n8k16.a", dtype.float, "i", "k"),
        DtypeError,
        ("has dtype float", "operand 'a' takes half or bfloat16"),
    ),
    (
        "fragment c takes float",
        lambda: Fragment("F", "m16n8k16.c", dtype.half, "i", "j"),
        DtypeError,
        ("has dtype half", "operand 'c' takes float"),
    ),
    (
        "fragment unknown dtype",
        lambda: Fragment("F", "m16n8k16.c", "fp32", "i", "j"),  # type: ignore[arg-type]
        DtypeError,
        ("unknown dtype of fragment 'F' 'fp32'", "allowed: float"),
    ),
    (
        "fragment same dims",
        lambda: Fragment("F", "m16n8k16.c", dtype.float, "i", "i"),
        SpecError,
        ("must differ",),
    ),
    # Regression (N11): the lane maps count in elements, so a folded row or column is wrong.
    (
        "fragment folded row",
        lambda: Fragment("F", "m16n8k16.a", dtype.half, "i16", "k"),
        SpecError,
        ("fragment 'F' has the row dimension 'i16', a fold of 'i'", "like 'i'"),
    ),
    (
        "fragment column folds the row's dimension",
        lambda: Fragment("F", "m16n8k16.a", dtype.half, "i", "i8"),
        SpecError,
        ("the column dimension 'i8', a fold of 'i'",),
    ),
    # Regression (P4).
    (
        "compound index given strides",
        lambda: CompoundIndex("T", Dims(i=4), Strides(i=2)),  # type: ignore[arg-type]
        SpecTypeError,
        ("compound index 'T' got Strides(i=2) as init", "takes no Strides", "threadIdx.x"),
    ),
    # Regression (N12).
    (
        "dims from no items",
        lambda: Dims.from_items(None),  # type: ignore[arg-type]
        SpecTypeError,
        ("Dims items are an iterable of (key, int) pairs", "got None"),
    ),
    (
        "strides from a str",
        lambda: Strides.from_items("i"),  # type: ignore[arg-type]
        SpecTypeError,
        ("Strides items are an iterable of (key, int) pairs", "got 'i'"),
    ),
    # Regression (B7): offsets and storage_size() are int.
    (
        "tensor span overflows int",
        lambda: Tensor("A", F, Dims(i=65536, j=65536)),
        DimsError,
        ("tensor 'A' spans 4294967296 elements", "i=65536, j=65536", "at most 2147483647"),
    ),
    (
        "given stride makes the span overflow int",
        lambda: Tensor("A", F, Dims(i=2), Strides(i=2147483647)),
        DimsError,
        ("tensor 'A' spans 2147483648 elements", "at most 2147483647"),
    ),
    (
        "compound index span overflows int",
        lambda: CompoundIndex("T", Dims(i=65536, j=65536)),
        DimsError,
        ("compound index 'T' spans 4294967296 elements",),
    ),
]

# Regression (B6): names that would break compilation of the generated header or of the
# code that uses it, each refused with its reason.
RESERVED_NAME_CASES: list[tuple[Callable[[], object], tuple[str, ...]]] = [
    (lambda: Dim("spio_cuda"), ("C++ type SPIO_CUDA", "SPIO_* names spio keeps for its macros")),
    (lambda: Dim("spio_host_device"), ("SPIO_HOST_DEVICE",)),
    (lambda: Tensor("SPIO_CUDA", F, Dims(i=2)), ("'SPIO_CUDA' is in the SPIO_* names",)),
    (lambda: Dim("int32_max"), ("C++ type INT32_MAX", "macro of the C standard library")),
    (lambda: Dims(uint_fast8_max=2), ("UINT_FAST8_MAX", "macro")),
    (lambda: Dim("m_pi"), ("C++ type M_PI", "macro of the C standard library")),
    (lambda: Dims(m_ln2=2), ("C++ type M_LN2", "macro")),
    (lambda: Tensor("INT64_C", F, Dims(i=2)), ("'INT64_C' is a macro",)),
    (lambda: Tensor("main", F, Dims(i=2)), ("'main' is already a name at global scope",)),
    (lambda: Tensor("min", F, Dims(i=2)), ("'min' is already a name at global scope",)),
    (lambda: Tensor("printf", F, Dims(i=2)), ("'printf' is already",)),
    (lambda: CompoundIndex("atomicAdd", Dims(i=2)), ("'atomicAdd' is already",)),
    (lambda: Tensor("atomicCAS_block", F, Dims(i=2)), ("'atomicCAS_block' is already",)),
    (lambda: Tensor("sqrtf", F, Dims(i=2)), ("'sqrtf' is already",)),
    (lambda: Tensor("nv_bfloat16", F, Dims(i=2)), ("'nv_bfloat16' is already",)),
    (lambda: Tensor("nv_half", F, Dims(i=2)), ("'nv_half' is already",)),
    (
        lambda: Tensor("range", F, Dims(i=2)),
        ("'range' is the name of a spio function that kernels call unqualified", "range(...)"),
    ),
    (lambda: Tensor("make_coordinates", F, Dims(i=2)), ("spio function",)),
    (lambda: Fragment("mma", "m16n8k16.c", dtype.float, "i", "j"), ("spio function",)),
    (lambda: Tensor("load_tile", F, Dims(i=2)), ("spio function",)),
]


@pytest.mark.parametrize(
    ("make", "error", "fragments"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_invalid_spec_raises(
    make: Callable[[], object], error: type[Exception], fragments: tuple[str, ...]
) -> None:
    with pytest.raises(error) as caught:
        make()
    for fragment in fragments:
        assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("make", "fragments"),
    RESERVED_NAME_CASES,
    ids=[fragments[0] for _, fragments in RESERVED_NAME_CASES],
)
def test_reserved_name_is_refused(make: Callable[[], object], fragments: tuple[str, ...]) -> None:
    with pytest.raises(SpecNameError) as caught:
        make()
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_errors_are_value_errors_and_type_errors_are_both() -> None:
    for error in (SpecError, DimsError, DtypeError, SpecNameError, SpecTypeError):
        assert issubclass(error, ValueError)
    assert issubclass(SpecTypeError, TypeError)


# Errors found only when specs meet: generate() blames the offending item.
GENERATE_CASES: list[tuple[str, list[object], type[Exception], int, tuple[str, ...]]] = [
    (
        "two specs one name",
        [Tensor("A", F, Dims(i=2)), Tensor("A", F, Dims(i=3))],
        SpecNameError,
        1,
        ("two specs are named 'A'", "(item 0)", "(item 1)"),
    ),
    (
        "tensor named like a dimension type",
        [Tensor("A", F, Dims(i=2)), Tensor("I", F, Dims(j=2))],
        SpecNameError,
        1,
        ("Tensor 'I' declares the C++ name I", "dimension 'i' already declares"),
    ),
    (
        "tensor named like an anonymous fold",
        [Tensor("K8", F, Dims(k8=2))],
        SpecNameError,
        0,
        ("C++ name K8", "fold 'k8'"),
    ),
    (
        "index named like a named fold",
        [Fold("block_i", "i", 64), CompoundIndex("BLOCK_I", Dims(i=2))],
        SpecNameError,
        1,
        ("CompoundIndex 'BLOCK_I'", "Fold 'block_i'"),
    ),
    (
        "swizzle named like its offset dimension",
        [Swizzle("SWIZZLE", "i", "k8", "swizzle")],
        SpecNameError,
        0,
        ("Swizzle 'SWIZZLE' declares the C++ name SWIZZLE", "dimension 'swizzle'"),
    ),
    (
        "dim and fold share a name",
        [Dim("block_i"), Fold("block_i", "i", 64)],
        SpecNameError,
        1,
        ("two specs are named 'block_i'",),
    ),
    (
        "fold of a named fold",
        [Fold("block_i", "i", 64), Fold("warp_i", "block_i", 2)],
        SpecError,
        1,
        ("'block_i', which is a named fold",),
    ),
    (
        "anonymous fold of a named fold",
        [Fold("block_i", "i", 64), Tensor("A", F, Dims(block_i4=2))],
        SpecError,
        1,
        ("'block_i4', a fold of the named fold 'block_i'",),
    ),
    (
        "unknown dtype name",
        [Tensor("A", "flaot", Dims(i=2))],
        DtypeError,
        0,
        ("dtype of tensor 'A' is 'flaot'", "neither a dtype (float", "nor the name of a Fragment"),
    ),
    (
        "dtype names a tensor",
        [Tensor("B", F, Dims(i=2)), Tensor("A", "B", Dims(i=2))],
        DtypeError,
        1,
        ("names a Tensor 'B', not a Fragment",),
    ),
    (
        "fragment listed after its tensor",
        [
            Tensor("ATile", "AFrag", Dims(i16=1)),
            Fragment("AFrag", "m16n8k16.a", dtype.half, "i", "k"),
        ],
        SpecError,
        0,
        ("listed after it", "list the Fragment first"),
    ),
    (
        "fragment object differs from the listed one",
        [
            Fragment("AFrag", "m16n8k16.a", dtype.half, "i", "k"),
            Tensor("ATile", Fragment("AFrag", "m16n8k8.a", dtype.half, "i", "k"), Dims(i=1)),
        ],
        SpecNameError,
        1,
        ("the Fragment spec named 'AFrag' is",),
    ),
    (
        "not a spec",
        [Dim("i"), Dims(i=2)],
        SpecTypeError,
        1,
        ("item 1 of the specs is Dims(i=2), which is not a spec", "goes inside a Tensor"),
    ),
    # Regression (B4): a named fold and its dimension in one Dims nest like anonymous folds.
    (
        "named fold and its dimension disagree",
        [Fold("block_i", "i", 64), Tensor("A", F, Dims(block_i=2, i=3))],
        DimsError,
        1,
        (
            "tensor 'A': inconsistent sizes of dimension 'i': i=3",
            "one BLOCK_I is 64 I, so 'i' must have size 64",
        ),
    ),
    (
        "anonymous fold does not divide a named fold",
        [Fold("warp_i", "i", 40), CompoundIndex("Idx", Dims(warp_i=2, i16=2))],
        DimsError,
        1,
        ("compound index 'Idx': fold 'i16' does not divide 'warp_i'",),
    ),
    (
        "named fold below an anonymous fold disagrees",
        [Tensor("A", F, Dims(i64=2, warp_i=4)), Fold("warp_i", "i", 32)],
        DimsError,
        0,
        ("tensor 'A': inconsistent sizes", "warp_i=4", "one I64 is 2 WARP_I"),
    ),
    # Regression (N10): a named fold by 1 counts what its dimension counts.
    (
        "named fold by one beside its dimension",
        [Fold("block_i", "i", 1), Tensor("A", F, Dims(block_i=2, i=4))],
        DimsError,
        1,
        ("folds 'block_i' and 'i' of 'i' both count 1 I", "distinct factors"),
    ),
    (
        "two named folds of one factor",
        [Fold("a", "i", 8), Fold("b", "i", 8), Tensor("T", F, Dims(a=2, b=1))],
        DimsError,
        2,
        ("folds 'a' and 'b' of 'i' both count 8 I",),
    ),
    # Regression (N11), through a named fold.
    (
        "fragment row is a named fold",
        [Fold("block_i", "i", 64), Fragment("F", "m16n8k16.c", dtype.float, "block_i", "j")],
        SpecError,
        1,
        ("fragment 'F' has the row dimension 'block_i', a named fold of 'i'",),
    ),
]


@pytest.mark.parametrize(
    ("specs", "error", "index", "fragments"),
    [case[1:] for case in GENERATE_CASES],
    ids=[case[0] for case in GENERATE_CASES],
)
def test_generate_rejects(
    specs: list[object], error: type[Exception], index: int, fragments: tuple[str, ...]
) -> None:
    with pytest.raises(error) as caught:
        generate(specs)  # type: ignore[arg-type]
    assert isinstance(caught.value, SpecError)
    assert caught.value.spec_index == index
    for fragment in fragments:
        assert fragment in str(caught.value)


@pytest.mark.parametrize("specs", ["Dim('i')", Dim("i"), 3, b"x"])
def test_generate_wants_an_iterable_of_specs(specs: object) -> None:
    with pytest.raises(SpecTypeError, match="iterable of specs"):
        generate(specs)  # type: ignore[arg-type]


def test_errors_pickle_with_their_location() -> None:
    error = DimsError("bad", filename="f.cu", lineno=3, spec_index=1)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is DimsError
    assert (str(copy), copy.spec_index) == ("f.cu:3: bad", 1)


def test_located_keeps_the_first_location() -> None:
    error = SpecError("bad").located("a.cu", 2)
    assert str(error.located("b.cu", 9)) == "a.cu:2: bad"
    assert str(SpecError("bad").located("a.cu", None)) == "a.cu: bad"


def test_named_fold_sizes_that_nest_are_accepted_and_no_minus_one_is_suggested() -> None:
    """Regression (B4): the check accepts what nests, and -1 (which Dims derive before named
    folds are known) is not offered as a way out."""
    fold = Fold("block_i", "i", 64)
    header = generate([fold, Tensor("A", F, Dims(block_i=2, i16=4, i=16))])
    assert "spio::DimInfo<BLOCK_I, 2, 64>, spio::DimInfo<I16, 4, 16>" in header
    with pytest.raises(DimsError) as caught:
        generate([fold, Tensor("A", F, Dims(block_i=2, i16=3))])
    assert "i16=3" in str(caught.value)
    assert "-1" not in str(caught.value)
