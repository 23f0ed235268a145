"""Misuse of the device parts fails to compile with a message in dimension words.

Each case compiles a kernel that must not compile and checks that the NVRTC error carries the
full log, the offending static_assert's message among it.
"""

from __future__ import annotations

import _nvrtc
import pytest

PRELUDE = """
#include "spio/spio.cuh"
struct I : spio::Dim<I> { using spio::Dim<I>::Dim; };
struct J : spio::Dim<J> { using spio::Dim<J>::Dim; };
struct K : spio::Dim<K> { using spio::Dim<K>::Dim; };
struct CHECKERS : spio::Dim<CHECKERS> { using spio::Dim<CHECKERS>::Dim; };
using I16 = spio::Fold<I, 16>;
using J16 = spio::Fold<J, 16>;
using K8 = spio::Fold<K, 8>;
using J8 = spio::Fold<J, 8>;
using K16 = spio::Fold<K, 16>;
using namespace spio::mma;
using AFrag = Fragment<M16N8K16, OperandA, __half, I, K>;
using BFrag = Fragment<M16N8K16, OperandB, __half, K, J>;
using CFrag = Fragment<M16N8K16, OperandC, float, I, J>;
"""

# (case, kernel body, a phrase the log must contain)
CASES = [
    (
        "mma_reduction_dimension",
        "AFrag a; Fragment<M16N8K16, OperandB, __half, I, J> b; CFrag c; mma(a, b, c, c);",
        "a's column dimension must be b's row dimension",
    ),
    (
        "mma_row_dimension",
        "AFrag a; BFrag b; Fragment<M16N8K16, OperandC, float, K, J> c; mma(a, b, c, c);",
        "a's row dimension must be the row dimension of c and d",
    ),
    (
        "mma_operand_order",
        "AFrag a; BFrag b; CFrag c; mma(b, a, c, c);",
        "a must be an OperandA fragment",
    ),
    (
        "mma_shapes",
        "Fragment<M16N8K8, OperandA, __half, I, K> a; BFrag b; CFrag c; mma(a, b, c, c);",
        "the four fragments must have one shape",
    ),
    (
        "mma_element_types",
        "Fragment<M16N8K16, OperandA, __nv_bfloat16, I, K> a; BFrag b; CFrag c; mma(a, b, c, c);",
        "a and b must hold one element type",
    ),
    (
        "fragment_element_type",
        "Fragment<M16N8K16, OperandA, float, I, K> a; (void)a;",
        "operands A and B hold __half or __nv_bfloat16, operand C holds float",
    ),
    (
        "fragment_same_dimensions",
        "Fragment<M16N8K16, OperandA, __half, I, I> a; (void)a;",
        "the row and column dimensions must be different dimensions",
    ),
    # Regression (N11): folds of one base, and folded lane maps, passed before.
    (
        "fragment_dimensions_of_one_base",
        "Fragment<M16N8K16, OperandA, __half, I, I16> a; (void)a;",
        "the row and column dimensions must be different dimensions",
    ),
    (
        "fragment_folded_dimension",
        "Fragment<M16N8K16, OperandA, __half, I16, K> a; (void)a;",
        "must be dimensions, not folds",
    ),
    (
        "to_half2_of_multiplicand",
        "AFrag a; a.zero(); __half2 h = a.to_half2(0); (void)h;",
        "only accumulator (OperandC) fragments hold f32 pairs",
    ),
    (
        "ldmatrix_into_accumulator",
        "__shared__ float s[4]; CFrag c; c.load(s);",
        "accumulator (OperandC) fragments are not loaded with ldmatrix",
    ),
    (
        "tile_reduction_extent",
        """
        AFrag a_data[2]; BFrag b_data[1]; CFrag c_data[1];
        auto a = spio::Tensor<AFrag, spio::DimInfo<K16, 2, 1>>(a_data);
        auto b = spio::Tensor<BFrag, spio::DimInfo<K16, 1, 1>>(b_data);
        auto c = spio::Tensor<CFrag, spio::DimInfo<I16, 1, 1>>(c_data);
        mma(a, b, c, c);
        """,
        "a and b must span the same extent of the reduction dimension",
    ),
    (
        "tile_column_extent",
        """
        AFrag a_data[1]; BFrag b_data[2]; CFrag c_data[1];
        auto a = spio::Tensor<AFrag, spio::DimInfo<I16, 1, 1>>(a_data);
        auto b = spio::Tensor<BFrag, spio::DimInfo<J8, 2, 1>>(b_data);
        auto c = spio::Tensor<CFrag, spio::DimInfo<J8, 1, 1>>(c_data);
        mma(a, b, c, c);
        """,
        "b, c and d must span the same extent of the column dimension",
    ),
    (
        "tile_finer_than_fragment",
        """
        AFrag a_data[2]; BFrag b_data[1]; CFrag c_data[1];
        auto a = spio::Tensor<AFrag, spio::DimInfo<spio::Fold<I, 8>, 2, 1>>(a_data);
        auto b = spio::Tensor<BFrag, spio::DimInfo<J8, 1, 1>>(b_data);
        auto c = spio::Tensor<CFrag, spio::DimInfo<J8, 1, 1>>(c_data);
        mma(a, b, c, c);
        """,
        "each tile dimension must fold a fragment dimension by a multiple of the fragment's extent",
    ),
    (
        "load_tile_coarser_smem",
        """
        __shared__ uint4 smem[64];
        BFrag b_data[2];
        auto b = spio::Tensor<BFrag, spio::DimInfo<J8, 2, 1>>(b_data);
        using Cells =
            spio::Tensor<uint4, spio::DimInfo<J16, 2, 32>, spio::DimInfo<CHECKERS, 32, 1>>;
        auto cells = Cells(smem);
        load_tile(b, cells[CHECKERS(threadIdx.x)]);
        """,
        "the shared-memory tensor cannot reach the tile's fragments",
    ),
    (
        "load_tile_swizzled_without_lane_cursor",
        """
        __shared__ uint4 smem[64];
        AFrag a_data[2];
        auto a = spio::Tensor<AFrag, spio::DimInfo<I16, 2, 1>>(a_data);
        using Cells =
            spio::Tensor<uint4, spio::DimInfo<I16, 2, 32>, spio::DimInfo<CHECKERS, 32, 1>>;
        auto cells = Cells(smem);
        load_tile(a, cells, 0);
        """,
        "the shared-memory tensor cannot reach each lane's ldmatrix row",
    ),
    (
        "wait_group_negative",
        "spio::arch::cp_async_wait_group<-1>();",
        "cannot be negative",
    ),
]


@pytest.mark.parametrize(
    ("body", "phrase"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_misuse_fails_with_message(body: str, phrase: str) -> None:
    """The kernel does not compile, and the error's log names the broken rule."""
    source = PRELUDE + f'extern "C" __global__ void kernel() {{\n{body}\n}}\n'
    with pytest.raises(_nvrtc.NvrtcError) as raised:
        _nvrtc.compile_cuda(source, arch="sm_90", name="misuse.cu")
    assert phrase in raised.value.log, raised.value.log


def test_error_carries_full_log_and_source() -> None:
    """An NvrtcError holds NVRTC's whole log, the source and the options, and prints the log."""
    source = 'extern "C" __global__ void kernel() { undeclared_name = 1; }\n'
    with pytest.raises(_nvrtc.NvrtcError) as raised:
        _nvrtc.compile_cuda(source, arch="sm_90", name="broken.cu")
    error = raised.value
    assert 'identifier "undeclared_name" is undefined' in error.log
    assert "broken.cu(1)" in error.log
    assert error.log in str(error)
    assert error.source == source
    assert "--gpu-architecture=sm_90" in error.options
