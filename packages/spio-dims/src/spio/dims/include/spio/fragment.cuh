// Tensor-core operand fragments: the registers one lane holds of an mma.sync operand, with typed
// lane maps.
//
// A warp-wide mma.sync spreads each operand matrix over the 32 lanes of a warp. A
// Fragment<Shape, Operand, T, RowDim, ColDim> is one lane's share of one operand, and it knows
// which element of the operand matrix each of its registers holds, as typed coordinates:
//
//     using AFrag = spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandA, __half, I, K>;
//     AFrag::row(lane, e)   // the I coordinate (0 ... 15) of element e of this lane
//     AFrag::col(lane, e)   // the K coordinate (0 ... 15)
//
// RowDim and ColDim name the operand's dimensions in its mathematical orientation: A is M x K
// (I x K for D[i][j] = A[i][k] * B[k][j] + C[i][j]), B is K x N (K x J), C and D are M x N
// (I x J).
//
// The lane maps (PTX ISA, "Matrix Fragments for mma.m16n8k8 / mma.m16n8k16", f16 and bf16
// multiplicands, f32 accumulators). Every operand is a grid of 8 x 8 blocks; lane L holds two
// neighbouring elements of each block, so with g = L / 4 and t = L % 4, element e of the lane
// lies in block e / 2, and
//   - A and C: at row g, column 2 * t + e % 2 of the block (pairs run along a row),
//   - B:       at row 2 * t + e % 2, column g of the block (pairs run down a column, along K).
// The blocks are ordered
//   - A (16 x 16): rows 0-7 / cols 0-7, rows 8-15 / cols 0-7, rows 0-7 / cols 8-15, rows 8-15 /
//     cols 8-15; A (16 x 8): the first two of those,
//   - B (16 x 8): rows 0-7, rows 8-15; B (8 x 8): the one block,
//   - C (16 x 8): rows 0-7, rows 8-15.
// Worked example, m16n8k16 A, lane 5 (g = 1, t = 1): elements 0 ... 7 hold (row, col) (1, 2),
// (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11).
//
// 16-bit operands keep each pair in one 32-bit register (the lower element in the low half),
// which is exactly what ldmatrix delivers for one 8 x 8 block: a fragment loads from shared
// memory with one ldmatrix (.x4 for A 16 x 16, .x2 for A 16 x 8 and B 16 x 8, .x1 for B 8 x 8).
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#include "spio/coordinates.h"      // Coordinates, make_coordinates: typed lane-map results
#include "spio/macros.h"           // SPIO_HOST_DEVICE
#include "spio/detail/meta.h"      // is_same_v
#include "spio/arch/ldmatrix.cuh"  // ldmatrix, ldmatrix_trans: fragment loads
#include "spio/arch/mma.cuh"       // mma_m16n8k8_f16, ...: the instructions behind mma()
#include "spio/arch/convert.cuh"   // to_half2, to_bfloat162: accumulator pairs to 16 bits
#include "spio/arch/lane.cuh"      // lane_id: the lane argument of the lane maps

namespace spio::mma {

/// The mma.sync shapes: M x N x K of one warp-wide multiply.
struct M16N8K8 {
    static constexpr int m = 16;
    static constexpr int n = 8;
    static constexpr int k = 8;
};

struct M16N8K16 {
    static constexpr int m = 16;
    static constexpr int n = 8;
    static constexpr int k = 16;
};

/// The operands of D = A * B + C: A is M x K, B is K x N, C (and D) are M x N.
struct OperandA {};
struct OperandB {};
struct OperandC {};

}  // namespace spio::mma

namespace spio::detail {

template <typename Shape>
inline constexpr bool is_mma_shape_v =
    is_same_v<Shape, mma::M16N8K8> || is_same_v<Shape, mma::M16N8K16>;

// The block grid of one operand (see the lane-map rules at the top of this file).
//   rows, cols: the operand's extent; pairs_along_rows: whether a lane's pair of elements in a
//   block sits in one row (A, C) or in one column (B); block_row(b), block_col(b): the origin of
//   block b.
template <typename Shape, typename Operand>
struct MmaOperandLayout;

// A, M x K: blocks column-major over a 2 x (K / 8) grid.
template <typename Shape>
struct MmaOperandLayout<Shape, mma::OperandA> {
    static constexpr int rows = Shape::m;
    static constexpr int cols = Shape::k;
    static constexpr bool pairs_along_rows = true;
    SPIO_HOST_DEVICE static constexpr int block_row(int b) { return 8 * (b % 2); }
    SPIO_HOST_DEVICE static constexpr int block_col(int b) { return 8 * (b / 2); }
};

// B, K x N: one column of K / 8 blocks.
template <typename Shape>
struct MmaOperandLayout<Shape, mma::OperandB> {
    static constexpr int rows = Shape::k;
    static constexpr int cols = Shape::n;
    static constexpr bool pairs_along_rows = false;
    SPIO_HOST_DEVICE static constexpr int block_row(int b) { return 8 * b; }
    SPIO_HOST_DEVICE static constexpr int block_col(int) { return 0; }
};

// C, M x N: one column of two blocks.
template <typename Shape>
struct MmaOperandLayout<Shape, mma::OperandC> {
    static constexpr int rows = Shape::m;
    static constexpr int cols = Shape::n;
    static constexpr bool pairs_along_rows = true;
    SPIO_HOST_DEVICE static constexpr int block_row(int b) { return 8 * b; }
    SPIO_HOST_DEVICE static constexpr int block_col(int) { return 0; }
};

// The element types an operand accepts and the register that holds them.
template <typename Operand, typename T>
struct MmaOperandElement {
    static constexpr bool valid = false;
    using Register = unsigned;
};

template <>
struct MmaOperandElement<mma::OperandA, __half> {
    static constexpr bool valid = true;
    using Register = unsigned;
};

template <>
struct MmaOperandElement<mma::OperandA, __nv_bfloat16> {
    static constexpr bool valid = true;
    using Register = unsigned;
};

template <>
struct MmaOperandElement<mma::OperandB, __half> {
    static constexpr bool valid = true;
    using Register = unsigned;
};

template <>
struct MmaOperandElement<mma::OperandB, __nv_bfloat16> {
    static constexpr bool valid = true;
    using Register = unsigned;
};

template <>
struct MmaOperandElement<mma::OperandC, float> {
    static constexpr bool valid = true;
    using Register = float;
};

}  // namespace spio::detail

namespace spio::mma {

/// One lane's registers of one mma operand, with its lane map in RowDim x ColDim coordinates.
///
/// Elements: size() per lane (A 16 x 16: 8, A 16 x 8: 4, B 16 x 8: 4, B 8 x 8: 2, C: 4),
/// numbered as the PTX ISA numbers them (a0, a1, ...); elements 2 * p and 2 * p + 1 form pair p,
/// which for 16-bit operands is register p.
template <typename Shape, typename Operand, typename T, typename RowDim, typename ColDim>
class Fragment {
    static_assert(detail::is_mma_shape_v<Shape>,
                  "Fragment: the shape must be spio::mma::M16N8K8 or spio::mma::M16N8K16");
    static_assert(detail::MmaOperandElement<Operand, T>::valid,
                  "Fragment: operands A and B hold __half or __nv_bfloat16, operand C holds float");
    static_assert(!detail::is_same_v<typename RowDim::base_type, typename ColDim::base_type>,
                  "Fragment: the row and column dimensions must be different dimensions");
    static_assert(RowDim::stride == 1 && ColDim::stride == 1,
                  "Fragment: the row and column dimensions must be dimensions, not folds (the "
                  "lane maps count single rows and columns: I16(5) would stand for I(80))");

    using Layout = detail::MmaOperandLayout<Shape, Operand>;
    using Register = typename detail::MmaOperandElement<Operand, T>::Register;
    static constexpr int kSize = Layout::rows * Layout::cols / 32;
    static constexpr int kRegisters = detail::is_same_v<Register, float> ? kSize : kSize / 2;
    using Registers = Register[kRegisters];

public:
    using shape_type = Shape;
    using operand_type = Operand;
    using element_type = T;
    using row_dim = RowDim;
    using col_dim = ColDim;
    /// float for C; unsigned (a pair of 16-bit elements) for A and B.
    using register_type = Register;

    /// The operand's extent: A M x K, B K x N, C M x N.
    static constexpr int rows = Layout::rows;
    static constexpr int cols = Layout::cols;

    /// The lanes of a warp hold rows * cols elements, 2 of each 8 x 8 block per lane.
    SPIO_HOST_DEVICE static constexpr int size() { return kSize; }

    /// 16-bit operands pack a pair per register; accumulators keep one float per register.
    SPIO_HOST_DEVICE static constexpr int num_registers() { return kRegisters; }

    /// Lane map: the row (RowDim, 0 ... rows - 1) of element e of lane `lane`.
    SPIO_HOST_DEVICE static constexpr RowDim row(int lane, int e) {
        return RowDim(row_index(lane, e));
    }

    /// Lane map: the column (ColDim, 0 ... cols - 1) of element e of lane `lane`.
    SPIO_HOST_DEVICE static constexpr ColDim col(int lane, int e) {
        return ColDim(col_index(lane, e));
    }

    /// Lane map: (row, col) of element e of lane `lane`, ready to offset a tile's origin.
    SPIO_HOST_DEVICE static constexpr auto coordinates(int lane, int e) {
        return spio::make_coordinates(row(lane, e), col(lane, e));
    }

    /// The lane maps as plain integers.
    SPIO_HOST_DEVICE static constexpr int row_index(int lane, int e) {
        return Layout::block_row(e / 2) +
               (Layout::pairs_along_rows ? lane / 4 : pair_offset(lane, e));
    }

    SPIO_HOST_DEVICE static constexpr int col_index(int lane, int e) {
        return Layout::block_col(e / 2) +
               (Layout::pairs_along_rows ? pair_offset(lane, e) : lane / 4);
    }

    /// Inverse lane map: the lane that holds the element at (row, col) of the operand, e.g. to
    /// gather an accumulator tile in another order after it went through shared memory.
    SPIO_HOST_DEVICE static constexpr int lane_of(int row, int col) {
        const int b = block_at(row, col);
        const int r = row - Layout::block_row(b);
        const int c = col - Layout::block_col(b);
        return Layout::pairs_along_rows ? 4 * r + c / 2 : 4 * c + r / 2;
    }

    /// Inverse lane map: which of lane_of(row, col)'s elements the one at (row, col) is.
    SPIO_HOST_DEVICE static constexpr int element_of(int row, int col) {
        const int b = block_at(row, col);
        const int along_pair =
            Layout::pairs_along_rows ? col - Layout::block_col(b) : row - Layout::block_row(b);
        return 2 * b + along_pair % 2;
    }

    /// Where lane `lane` points ldmatrix for load(): the (row, col) of the first of the 8
    /// elements of its 16-byte row. load() needs the pair direction contiguous in memory: K for
    /// A (an I x K tile with unit stride in K) and for B (a K x J tile with unit stride in K).
    //
    /// Lanes 8 * b ... 8 * b + 7 address block b; lane L walks the block across the pairs, e.g.
    /// A 16 x 16: lane L points at (row L % 16, col 8 * (L / 16)). Lanes beyond the last block
    /// repeat the first ones, so every lane passes a valid address.
    SPIO_HOST_DEVICE static constexpr auto ldmatrix_origin(int lane) {
        return spio::make_coordinates(
            RowDim(Layout::block_row(load_block(lane)) + (Layout::pairs_along_rows ? lane % 8 : 0)),
            ColDim(Layout::block_col(load_block(lane)) +
                   (Layout::pairs_along_rows ? 0 : lane % 8)));
    }

    /// Where lane `lane` points ldmatrix for load_trans(): for tiles whose other dimension is
    /// contiguous (A with unit stride in I, B with unit stride in J). Lane L addresses element
    /// L % 8 of block L / 8 along the pair direction, e.g. B 16 x 8: lane L points at
    /// (row L % 16, col 0).
    SPIO_HOST_DEVICE static constexpr auto ldmatrix_trans_origin(int lane) {
        return spio::make_coordinates(
            RowDim(Layout::block_row(load_block(lane)) + (Layout::pairs_along_rows ? 0 : lane % 8)),
            ColDim(Layout::block_col(load_block(lane)) +
                   (Layout::pairs_along_rows ? lane % 8 : 0)));
    }

    /// The registers, in the order the mma instruction takes them.
    __device__ Registers& regs() { return _regs; }
    __device__ const Registers& regs() const { return _regs; }

    /// Element e (0 ... size() - 1).
    __device__ T get(int e) const {
        if constexpr (detail::is_same_v<T, float>) {
            // Case: accumulators, one element per register.
            return _regs[e];
        } else {
            // Case: 16-bit operands; even e is the low half of register e / 2, odd e the high.
            const unsigned short bits = static_cast<unsigned short>(_regs[e / 2] >> (16 * (e % 2)));
            return from_bits(bits);
        }
    }

    /// Set element e (0 ... size() - 1) to `value`.
    __device__ void set(int e, T value) {
        if constexpr (detail::is_same_v<T, float>) {
            // Case: accumulators, one element per register.
            _regs[e] = value;
        } else {
            // Case: 16-bit operands; replace one half of register e / 2.
            const int shift = 16 * (e % 2);
            _regs[e / 2] = (_regs[e / 2] & ~(0xffffu << shift)) | (to_bits(value) << shift);
        }
    }

    /// Set every element to `value`.
    __device__ void fill(T value) {
        if constexpr (detail::is_same_v<T, float>) {
            // Case: accumulators, one element per register.
            for (int r = 0; r < num_registers(); ++r) _regs[r] = value;
        } else {
            // Case: 16-bit operands; both halves of each register.
            const unsigned pair = to_bits(value) | (to_bits(value) << 16);
            for (int r = 0; r < num_registers(); ++r) _regs[r] = pair;
        }
    }

    /// Set every element to zero (the bit pattern 0 is +0 in f32, f16 and bf16).
    __device__ void zero() {
        for (int r = 0; r < num_registers(); ++r) _regs[r] = register_type(0);
    }

    /// Accumulator pair p (elements 2 * p and 2 * p + 1: one row, neighbouring columns) rounded
    /// to __half2, the lower column in the low half.
    __device__ __half2 to_half2(int p) const {
        static_assert(detail::is_same_v<Operand, OperandC>,
                      "to_half2: only accumulator (OperandC) fragments hold f32 pairs");
        return arch::to_half2(_regs[2 * p], _regs[2 * p + 1]);
    }

    /// Accumulator pair p rounded to __nv_bfloat162, the lower column in the low half.
    __device__ __nv_bfloat162 to_bfloat162(int p) const {
        static_assert(detail::is_same_v<Operand, OperandC>,
                      "to_bfloat162: only accumulator (OperandC) fragments hold f32 pairs");
        return arch::to_bfloat162(_regs[2 * p], _regs[2 * p + 1]);
    }

    /// Load the fragment from shared memory with one ldmatrix; every lane of the warp calls it
    /// with the address of the element at ldmatrix_origin(lane) of the operand's tile. The tile
    /// has unit stride along K, and its 16-byte rows are 16-byte aligned.
    __device__ void load(const void* lane_row) {
        static_assert(!detail::is_same_v<Operand, OperandC>,
                      "load: accumulator (OperandC) fragments are not loaded with ldmatrix");
        arch::ldmatrix(_regs, lane_row);
    }

    /// Load the fragment from shared memory with one ldmatrix .trans; every lane passes the
    /// address of the element at ldmatrix_trans_origin(lane). The tile has unit stride along
    /// I (A) or J (B).
    __device__ void load_trans(const void* lane_row) {
        static_assert(!detail::is_same_v<Operand, OperandC>,
                      "load_trans: accumulator (OperandC) fragments are not loaded with ldmatrix");
        arch::ldmatrix_trans(_regs, lane_row);
    }

    /// load_trans from the shared-memory window address of the lane's element (a kernel that
    /// keeps its lanes' addresses in registers: arch::shared_address).
    __device__ void load_trans(unsigned lane_row) {
        static_assert(!detail::is_same_v<Operand, OperandC>,
                      "load_trans: accumulator (OperandC) fragments are not loaded with ldmatrix");
        arch::ldmatrix_trans(_regs, lane_row);
    }

private:
    // Position of element e of the lane across its pair: 2 * (lane % 4) + e % 2.
    SPIO_HOST_DEVICE static constexpr int pair_offset(int lane, int e) {
        return 2 * (lane % 4) + e % 2;
    }

    // The 8 x 8 block (element pair index e / 2) that holds (row, col).
    SPIO_HOST_DEVICE static constexpr int block_at(int row, int col) {
        int found = 0;
        for (int b = 0; b < kSize / 2; ++b) {
            if (Layout::block_row(b) == row / 8 * 8 && Layout::block_col(b) == col / 8 * 8) {
                found = b;
            }
        }
        return found;
    }

    // The 8 x 8 block whose rows lane `lane` addresses in ldmatrix (a 16-bit operand has one
    // block per register; the wrap-around keeps the lanes past the last block valid).
    SPIO_HOST_DEVICE static constexpr int load_block(int lane) {
        return (lane / 8) % num_registers();
    }

    // The 16 bits of a multiplicand element, and back.
    __device__ static unsigned to_bits(T value) {
        if constexpr (detail::is_same_v<T, __half>) {
            // Case: f16.
            return __half_as_ushort(value);
        } else {
            // Case: bf16.
            return __bfloat16_as_ushort(value);
        }
    }

    __device__ static T from_bits(unsigned short bits) {
        if constexpr (detail::is_same_v<T, __half>) {
            // Case: f16.
            return __ushort_as_half(bits);
        } else {
            // Case: bf16.
            return __ushort_as_bfloat16(bits);
        }
    }

    Registers _regs;
};

/// Load two fragments of two registers each (B 16 x 8 of m16n8k16, A 16 x 8 of m16n8k8) with one
/// ldmatrix .x4, half the instructions of two loads: lanes 0 ... 15 pass the addresses of
/// `first`'s rows, as for first.load() (ldmatrix_origin(lane)), and lanes 16 ... 31 those of
/// `second`'s (ldmatrix_origin(lane - 16) of it). Two B fragments 8 columns apart, say:
///
///     load_pair(b0, b1, lane_smem[J8(lane / 16)].get());
template <typename Frag>
__device__ void load_pair(Frag& first, Frag& second, const void* lane_row) {
    static_assert(Frag::num_registers() == 2,
                  "load_pair: each fragment must hold two registers (an ldmatrix .x4 fills two)");
    unsigned r[4];
    arch::ldmatrix(r, lane_row);
    first.regs()[0] = r[0];
    first.regs()[1] = r[1];
    second.regs()[0] = r[2];
    second.regs()[1] = r[3];
}

/// load_pair with ldmatrix .x4.trans: lanes 0 ... 15 pass the addresses of `first`'s rows at
/// ldmatrix_trans_origin(lane), lanes 16 ... 31 those of `second`'s.
template <typename Frag>
__device__ void load_pair_trans(Frag& first, Frag& second, const void* lane_row) {
    static_assert(Frag::num_registers() == 2,
                  "load_pair_trans: each fragment must hold two registers (an ldmatrix .x4 "
                  "fills two)");
    unsigned r[4];
    arch::ldmatrix_trans(r, lane_row);
    first.regs()[0] = r[0];
    first.regs()[1] = r[1];
    second.regs()[0] = r[2];
    second.regs()[1] = r[3];
}

/// D = A * B + C over one warp-wide tile: D[i][j] = sum over k of A[i][k] * B[k][j] + C[i][j].
/// All 32 lanes call it together. D may be C (accumulate in place):
///
///     mma(a, b, c, c);
///
/// The fragments conform when A is I x K, B is K x J, and C and D are I x J, for one shape.
template <typename SA, typename OA, typename TA, typename RA, typename CA, typename SB, typename OB,
          typename TB, typename RB, typename CB, typename SC, typename OC, typename TC, typename RC,
          typename CC, typename SD, typename OD, typename TD, typename RD, typename CD>
__device__ void mma(const Fragment<SA, OA, TA, RA, CA>& a, const Fragment<SB, OB, TB, RB, CB>& b,
                    const Fragment<SC, OC, TC, RC, CC>& c, Fragment<SD, OD, TD, RD, CD>& d) {
    static_assert(detail::is_same_v<OA, OperandA> && detail::is_same_v<OB, OperandB> &&
                      detail::is_same_v<OC, OperandC> && detail::is_same_v<OD, OperandC>,
                  "mma(a, b, c, d): a must be an OperandA fragment, b an OperandB fragment, "
                  "c and d OperandC fragments");
    static_assert(
        detail::is_same_v<SA, SB> && detail::is_same_v<SA, SC> && detail::is_same_v<SA, SD>,
        "mma(a, b, c, d): the four fragments must have one shape (M16N8K8 or M16N8K16)");
    static_assert(detail::is_same_v<TA, TB>,
                  "mma(a, b, c, d): a and b must hold one element type (__half or __nv_bfloat16)");
    static_assert(detail::is_same_v<CA, RB>,
                  "mma(a, b, c, d): a's column dimension must be b's row dimension, the reduction "
                  "dimension (K in D[i][j] = A[i][k] * B[k][j] + C[i][j])");
    static_assert(detail::is_same_v<RA, RC> && detail::is_same_v<RA, RD>,
                  "mma(a, b, c, d): a's row dimension must be the row dimension of c and d "
                  "(I in D[i][j] = A[i][k] * B[k][j] + C[i][j])");
    static_assert(detail::is_same_v<CB, CC> && detail::is_same_v<CB, CD>,
                  "mma(a, b, c, d): b's column dimension must be the column dimension of c and d "
                  "(J in D[i][j] = A[i][k] * B[k][j] + C[i][j])");
    if constexpr (detail::is_same_v<SA, M16N8K16> && detail::is_same_v<TA, __half>) {
        // Case: m16n8k16, f16.
        arch::mma_m16n8k16_f16(d.regs(), a.regs(), b.regs(), c.regs());
    } else if constexpr (detail::is_same_v<SA, M16N8K16>) {
        // Case: m16n8k16, bf16 (the only other 16-bit type a fragment admits).
        arch::mma_m16n8k16_bf16(d.regs(), a.regs(), b.regs(), c.regs());
    } else if constexpr (detail::is_same_v<TA, __half>) {
        // Case: m16n8k8, f16.
        arch::mma_m16n8k8_f16(d.regs(), a.regs(), b.regs(), c.regs());
    } else {
        // Case: m16n8k8, bf16.
        arch::mma_m16n8k8_bf16(d.regs(), a.regs(), b.regs(), c.regs());
    }
}

}  // namespace spio::mma
