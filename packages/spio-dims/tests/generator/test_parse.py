"""The @spio block parser: what it reads, and that it never runs what it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from spio.dims import (
    CompoundIndex,
    Dim,
    Dims,
    DimsError,
    DtypeError,
    SpecError,
    SpecNameError,
    SpecSyntaxError,
    SpecTypeError,
    Strides,
    Swizzle,
    Tensor,
    dtype,
    generate,
    generate_file,
    parse,
    parse_file,
)

LESSONS = Path(__file__).parent / "golden" / "lessons"


def block(body: str, before: str = "") -> str:
    """A source whose block starts on line 2 + before's lines, its list on the next line."""
    return f"// a kernel\n{before}/*@spio\n[\n{body}\n]\n@spio*/\nint x;\n"


def test_lesson_blocks_parse_to_specs() -> None:
    assert parse_file(LESSONS / "01_commutativity.cpp") == (
        Dim("i"),
        Dim("j"),
        Tensor("A", dtype.float, Dims(i=16, k=32)),
        Tensor("B", dtype.float, Dims(k=32, j=64)),
    )
    assert parse_file(LESSONS / "04_projection.cpp")[-1] == Tensor(
        "C_tile", dtype.float, Dims(i=8, j=32), Strides(i=64)
    )


def test_trailing_comma_of_lesson_5() -> None:
    specs = parse_file(LESSONS / "05_compound_index.cpp")
    assert [type(spec) for spec in specs] == [CompoundIndex, CompoundIndex, Tensor]


def test_several_blocks_are_concatenated_in_order() -> None:
    source = block('Dim("i")') + "void f();\n" + block('Dim("j"), Dim("k")')
    assert parse(source) == (Dim("i"), Dim("j"), Dim("k"))


def test_one_line_block_tuple_and_empty_list() -> None:
    assert parse('/*@spio [Dim("i")] @spio*/') == (Dim("i"),)
    assert parse('/*@spio (Dim("i"), Dim("j")) @spio*/') == (Dim("i"), Dim("j"))
    assert parse("/*@spio [] @spio*/") == ()
    assert parse("no blocks here") == ()


def test_keywords_negative_sizes_none_and_bools() -> None:
    (tensor, index) = parse(
        "/*@spio [Tensor('A', dtype.uint4, Dims(k8=4, k=-1), strides=None, constant=True),"
        " CompoundIndex('T', Dims(i=2), init=None)] @spio*/"
    )
    assert tensor == Tensor("A", dtype.uint4, Dims(k8=4, k=8), constant=True)
    assert index == CompoundIndex("T", Dims(i=2))


def test_swizzle_block() -> None:
    source = block(
        'Tensor("Smem", dtype.uint4, Dims(i16=2, swizzle=128)),\n'
        'Swizzle("SmemSwizzle", "i", "k4", "swizzle", cells=4),'
    )
    specs = parse(source, "kernel.cu")
    assert specs[1] == Swizzle("SmemSwizzle", "i", "k4", "swizzle", cells=4)
    assert "\nusing SmemSwizzle = spio::SwizzleIndex<4, I, K4, SWIZZLE>;\n" in generate(specs)


def test_swizzle_cells_error_is_placed_in_the_file() -> None:
    with pytest.raises(DimsError) as caught:
        parse(block('Swizzle("S", "i", "k8", "swizzle", cells=3)'), "k.cu")
    assert str(caught.value) == (
        "k.cu:4: cells of swizzle 'S' is 3; allowed: 2, 4 or 8 (rows of 32, 64 or 128 bytes)"
    )


def test_other_tags_are_not_blocks() -> None:
    assert parse("/*@spiox [Dim('i')] @spio*/ /*@spio [Dim('j')] @spio*/") == (Dim("j"),)


def test_dims_with_dtype_by_name() -> None:
    (tensor,) = parse("/*@spio [Tensor('A', 'half', Dims(i=2))] @spio*/")
    assert isinstance(tensor, Tensor)
    assert tensor.dtype is dtype.half


# Payloads that exec/eval would run. Each must be refused, naming file and line.
PAYLOADS = [
    "__import__('os').system('touch {marker}')",
    "(lambda: 0)()",
    "[x for x in y]",
    "1+1",
    "open('{marker}', 'w')",
    "Tensor.__class__",
    "Tensor.__init__.__globals__",
    "getattr(Tensor, '__class__')",
    "Dim('i').__class__.__bases__[0].__subclasses__()",
    "dtype.__class__",
    "dtype.float.__class__",
    "eval('1')",
    "exec('import os')",
    "Dim(*['i'])",
    "Dim(**{{'name': 'i'}})",
    "Dim(name)",
    "Dim(f'{{1}}')",
    "Dim('i') if True else Dim('j')",
    "Tensor('A', dtype.float, Dims(i=2**40))",
    "Tensor('A', dtype.float, Dims(i=-(-2)))",
    "Dims(i=1.5)",
    "Dim(b'i')",
    "Dim(...)",
    "Dim('i')[0]",
    "(x := Dim('i'))",
    "{{'a': Dim('i')}}",
    "Dim(['i'])",
    "Tensor('A', dtype.float, Dims(i=+2))",
    "Tensor('A', dtype.float, Dims(i=not 2))",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_are_refused_with_file_and_line(payload: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = block(f'Dim("i"),\n{payload.format(marker=marker)}')
    with pytest.raises(SpecError) as caught:
        parse(source, "kernel.cu")
    # The payload sits on line 5: comment, /*@spio, [, Dim("i"), payload.
    assert str(caught.value).startswith("kernel.cu:5: ")
    assert (caught.value.filename, caught.value.lineno) == ("kernel.cu", 5)
    assert not marker.exists()


def test_refusal_says_what_is_allowed() -> None:
    with pytest.raises(SpecSyntaxError) as caught:
        parse(block("__import__('os').system('x')"), "k.cu")
    message = str(caught.value)
    assert "calling __import__('os').system is not allowed" in message
    assert (
        "Dim, Fold, Dims, Strides, Tensor, CompoundIndex, Checkerboard, Swizzle, Fragment"
        in message
    )


def test_unknown_function_is_named() -> None:
    with pytest.raises(SpecSyntaxError, match="calling open is not allowed"):
        parse(block("open('f')"))


def test_arithmetic_is_named() -> None:
    with pytest.raises(SpecSyntaxError, match=r"1\+1 is not allowed \(arithmetic\)"):
        parse(block("Tensor('A', dtype.float, Dims(i=1+1))"))


def test_unknown_dtype_attribute() -> None:
    with pytest.raises(DtypeError) as caught:
        parse(block("Tensor('A', dtype.flaot, Dims(i=2))"), "k.cu")
    assert str(caught.value).startswith("k.cu:4: unknown dtype dtype.flaot; allowed: float")


def test_line_numbers_count_from_the_top_of_the_file() -> None:
    source = block('Dim("i")', before="\n" * 10) + block(
        'Dim("j"),\nTensor("A", dtype.float,\n       Dims(i=0))'
    )
    with pytest.raises(DimsError) as caught:
        parse(source, "k.cu")
    # Second block: line 19 is its /*@spio, the Dims call is on line 23.
    assert caught.value.lineno == 23
    assert "size of 'i' is 0" in str(caught.value)


def test_error_in_a_one_line_block_after_code() -> None:
    with pytest.raises(SpecSyntaxError) as caught:
        parse("int a;\nint b; /*@spio [Dim(x)] @spio*/\n", "k.cu")
    assert caught.value.lineno == 2


def test_python_syntax_error_is_placed_in_the_file() -> None:
    with pytest.raises(SpecSyntaxError) as caught:
        parse(block('Dim("i"),\nDim("j"'), "k.cu")
    assert caught.value.filename == "k.cu"
    assert (caught.value.lineno or 0) >= 4
    assert "invalid Python in @spio block" in str(caught.value)


def test_duplicate_dims_keyword() -> None:
    with pytest.raises(DimsError) as caught:
        parse(block('Tensor("A", dtype.float,\nDims(k=4, i=2, k=4))'), "k.cu")
    assert str(caught.value) == "k.cu:5: duplicate dimension 'k' in Dims; each key may appear once"


def test_repeated_keyword_of_a_spec() -> None:
    with pytest.raises(SpecSyntaxError, match="Tensor\\(\\) got argument 'constant' twice"):
        parse(block("Tensor('A', dtype.float, Dims(i=2), constant=True, constant=False)"))


def test_wrong_signature_is_a_located_type_error() -> None:
    with pytest.raises(SpecTypeError) as caught:
        parse(block("Tensor('A', dtype.float)"), "k.cu")
    assert caught.value.lineno == 4
    assert "Tensor(...): missing 1 required positional argument: 'dims'" in str(caught.value)
    assert isinstance(caught.value, TypeError)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "Tensor('A', dtype.float, Dims(i=2), None, False, 7)",
            "k.cu:4: Tensor(...): takes at most 5 positional arguments (name, dtype, dims, "
            "strides, constant); got 6",
        ),
        ("Dim('i', 'j')", "k.cu:4: Dim(...): takes at most 1 positional argument (name); got 2"),
        (
            "Tensor('A', dtype.float, Dims(4))",
            "k.cu:4: Dims(...): takes keyword arguments only, like Dims(i=4); got 1 positional "
            "argument",
        ),
    ],
    ids=["tensor", "dim", "dims"],
)
def test_too_many_positional_arguments_are_counted_as_written(call: str, message: str) -> None:
    """Regression (P3): the counts are the block's, not Python's (which count self)."""
    with pytest.raises(SpecTypeError) as caught:
        parse(block(call), "k.cu")
    assert str(caught.value) == message


def test_validation_error_keeps_its_type_and_gains_a_location() -> None:
    with pytest.raises(SpecNameError) as caught:
        parse(block('Dim("class")'), "k.cu")
    assert (
        str(caught.value) == "k.cu:4: dimension name 'class' is a C++ keyword; choose another name"
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("/*@spio [Dim('i')]", "block is not closed"),
        ("/*@spio   @spio*/", "empty @spio block"),
        ("/*@spio Dim('i') @spio*/", "a @spio block is a list of specs"),
        ("/*@spio [Dims(i=2)] @spio*/", "Dims(i=2) is not a spec"),
        ("/*@spio ['i'] @spio*/", "'i' is not a spec"),
        ("/*@spio [" + "[" * 300 + "]" * 300 + "] @spio*/", "@spio block"),
    ],
)
def test_malformed_blocks(source: str, message: str) -> None:
    with pytest.raises(SpecSyntaxError) as caught:
        parse(source, "k.cu")
    assert message in str(caught.value)
    assert caught.value.lineno == 1


def test_generate_file_places_collisions_at_the_offending_line(tmp_path: Path) -> None:
    source = tmp_path / "kernel.cu"
    source.write_text(
        block('Tensor("A", dtype.float, Dims(i=2)),\nTensor("I", dtype.float, Dims(j=2))')
    )
    with pytest.raises(SpecNameError) as caught:
        generate_file(source)
    assert str(caught.value).startswith(f"{source}:5: Tensor 'I' declares the C++ name I")


def test_generate_file_without_blocks(tmp_path: Path) -> None:
    source = tmp_path / "plain.cu"
    source.write_text("int main() {}\n")
    with pytest.raises(SpecSyntaxError) as caught:
        generate_file(source)
    assert str(caught.value).startswith(f"{source}: no /*@spio ... @spio*/ block found")


def test_generate_file_names_the_source_by_its_base_name(tmp_path: Path) -> None:
    source = tmp_path / "deep" / "kernel.cu"
    source.parent.mkdir()
    source.write_text(block('Dim("i")'))
    header = generate_file(source)
    assert header.splitlines()[1] == "// Source: kernel.cu"
    assert header == generate(parse_file(source), source="kernel.cu")


@pytest.mark.parametrize("source", [None, b"/*@spio [Dim('i')] @spio*/", 3])
def test_source_that_is_not_text_is_a_type_error(source: object) -> None:
    with pytest.raises(TypeError, match=r"source must be a str, got .*parse_file reads files"):
        parse(source)  # type: ignore[arg-type]
