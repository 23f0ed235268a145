// Compile-time checks of the fragment lane maps (spio/fragment.cuh); the test passes when this
// file compiles. For every fragment type:
//   - the lane maps cover each element of the operand exactly once over the 32 lanes;
//   - ldmatrix_origin / ldmatrix_trans_origin agree with the lane maps under ldmatrix's own
//     rule: register b of lane L holds row L / 4, columns 2 * (L % 4) + h of 8 x 8 matrix b
//     (transposed with .trans), whose rows lanes 8 * b ... 8 * b + 7 address;
//   - the worked examples of the header hold;
//   - lane_of / element_of invert the lane maps.
#include "spio/dim.h"         // Dim
#include "spio/fragment.cuh"  // Fragment, the lane maps under test

struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};
struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};
struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};

using namespace spio::mma;

// Each (row, col) of the operand is held by exactly one (lane, element).
template <typename F>
__host__ __device__ constexpr bool covers_each_element_once() {
    int count[16][16] = {};
    for (int lane = 0; lane < 32; ++lane) {
        for (int e = 0; e < F::size(); ++e) {
            const int row = F::row(lane, e).get();
            const int col = F::col(lane, e).get();
            if (row < 0 || row >= F::rows || col < 0 || col >= F::cols) return false;
            ++count[row][col];
        }
    }
    for (int row = 0; row < F::rows; ++row) {
        for (int col = 0; col < F::cols; ++col) {
            if (count[row][col] != 1) return false;
        }
    }
    return true;
}

// The K dimension of a multiplicand: A's columns, B's rows. ldmatrix rows run along K without
// .trans and across it with .trans.
template <typename F>
__host__ __device__ constexpr bool k_is_column() {
    return spio::detail::is_same_v<typename F::operand_type, OperandA>;
}

// Where ldmatrix puts element e = 2 * b + h of lane L: the row address of lane
// 8 * b + (L / 4) (plain) or 8 * b + 2 * (L % 4) + h (.trans), plus an offset along that row.
template <typename F, bool Trans>
__host__ __device__ constexpr bool ldmatrix_matches_lane_map() {
    using Row = typename F::row_dim;
    using Col = typename F::col_dim;
    for (int lane = 0; lane < 32; ++lane) {
        for (int e = 0; e < F::size(); ++e) {
            const int b = e / 2;
            const int h = e % 2;
            const int source_lane = Trans ? 8 * b + 2 * (lane % 4) + h : 8 * b + lane / 4;
            const int along_row = Trans ? lane / 4 : 2 * (lane % 4) + h;
            const auto origin =
                Trans ? F::ldmatrix_trans_origin(source_lane) : F::ldmatrix_origin(source_lane);
            // A 16-byte row runs along K without .trans, across K with it.
            const bool row_runs_along_columns = Trans ? !k_is_column<F>() : k_is_column<F>();
            const int row =
                origin.template get<Row>().get() + (row_runs_along_columns ? 0 : along_row);
            const int col =
                origin.template get<Col>().get() + (row_runs_along_columns ? along_row : 0);
            if (row != F::row(lane, e).get() || col != F::col(lane, e).get()) return false;
        }
    }
    return true;
}

template <typename F>
__host__ __device__ constexpr bool check_multiplicand() {
    return covers_each_element_once<F>() && ldmatrix_matches_lane_map<F, false>() &&
           ldmatrix_matches_lane_map<F, true>();
}

static_assert(check_multiplicand<Fragment<M16N8K16, OperandA, __half, I, K>>(),
              "m16n8k16 A (16 x 16) lane map or ldmatrix origins");
static_assert(check_multiplicand<Fragment<M16N8K16, OperandB, __half, K, J>>(),
              "m16n8k16 B (16 x 8) lane map or ldmatrix origins");
static_assert(check_multiplicand<Fragment<M16N8K8, OperandA, __nv_bfloat16, I, K>>(),
              "m16n8k8 A (16 x 8) lane map or ldmatrix origins");
static_assert(check_multiplicand<Fragment<M16N8K8, OperandB, __nv_bfloat16, K, J>>(),
              "m16n8k8 B (8 x 8) lane map or ldmatrix origins");
static_assert(covers_each_element_once<Fragment<M16N8K16, OperandC, float, I, J>>(),
              "m16n8k16 C (16 x 8) lane map");
static_assert(covers_each_element_once<Fragment<M16N8K8, OperandC, float, I, J>>(),
              "m16n8k8 C (16 x 8) lane map");

// Sizes: elements and registers per lane.
using A16 = Fragment<M16N8K16, OperandA, __half, I, K>;
using B16 = Fragment<M16N8K16, OperandB, __half, K, J>;
using A8 = Fragment<M16N8K8, OperandA, __half, I, K>;
using B8 = Fragment<M16N8K8, OperandB, __half, K, J>;
using C16 = Fragment<M16N8K16, OperandC, float, I, J>;
static_assert(A16::size() == 8 && A16::num_registers() == 4, "A 16 x 16: 8 halves in 4 registers");
static_assert(B16::size() == 4 && B16::num_registers() == 2, "B 16 x 8: 4 halves in 2 registers");
static_assert(A8::size() == 4 && A8::num_registers() == 2, "A 16 x 8: 4 halves in 2 registers");
static_assert(B8::size() == 2 && B8::num_registers() == 1, "B 8 x 8: 2 halves in 1 register");
static_assert(C16::size() == 4 && C16::num_registers() == 4, "C 16 x 8: 4 floats");

// The header's worked example: m16n8k16 A, lane 5 holds (1, 2), (1, 3), (9, 2), (9, 3),
// (1, 10), (1, 11), (9, 10), (9, 11).
__host__ __device__ constexpr bool worked_example() {
    constexpr int rows[8] = {1, 1, 9, 9, 1, 1, 9, 9};
    constexpr int cols[8] = {2, 3, 2, 3, 10, 11, 10, 11};
    for (int e = 0; e < 8; ++e) {
        if (A16::row(5, e) != I(rows[e]) || A16::col(5, e) != K(cols[e])) return false;
    }
    return true;
}
static_assert(worked_example(), "the worked example of spio/fragment.cuh");

// The PTX ISA's own formulas, spelled out (g = L / 4, t = L % 4):
//   A 16 x 16: a_i at row g + 8 * (i % 4 >= 2), column 2 * t + (i & 1) + 8 * (i >= 4);
//   B 16 x 8:  b_i at row 2 * t + (i & 1) + 8 * (i >= 2), column g;
//   C 16 x 8:  c_i at row g + 8 * (i >= 2), column 2 * t + (i & 1).
__host__ __device__ constexpr bool ptx_formulas() {
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4;
        const int t = lane % 4;
        for (int i = 0; i < 8; ++i) {
            const int a_row = g + (i % 4 >= 2 ? 8 : 0);
            const int a_col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
            if (A16::row(lane, i) != I(a_row) || A16::col(lane, i) != K(a_col)) return false;
        }
        for (int i = 0; i < 4; ++i) {
            const int b_row = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
            if (B16::row(lane, i) != K(b_row) || B16::col(lane, i) != J(g)) return false;
            const int c_row = g + (i >= 2 ? 8 : 0);
            const int c_col = 2 * t + (i & 1);
            if (C16::row(lane, i) != I(c_row) || C16::col(lane, i) != J(c_col)) return false;
        }
    }
    return true;
}
static_assert(ptx_formulas(), "A, B and C lane maps against the PTX ISA formulas");

// lane_of and element_of give back the (lane, element) of every (row, col) the lane maps name.
template <typename F>
__host__ __device__ constexpr bool inverse_lane_map() {
    for (int lane = 0; lane < 32; ++lane) {
        for (int e = 0; e < F::size(); ++e) {
            const int row = F::row_index(lane, e);
            const int col = F::col_index(lane, e);
            if (F::lane_of(row, col) != lane || F::element_of(row, col) != e) return false;
        }
    }
    return true;
}
static_assert(inverse_lane_map<A16>() && inverse_lane_map<B16>() && inverse_lane_map<A8>() &&
                  inverse_lane_map<B8>() && inverse_lane_map<C16>(),
              "lane_of / element_of invert the lane maps of every operand");
static_assert(C16::lane_of(9, 5) == 6 && C16::element_of(9, 5) == 3,
              "C 16 x 8: (9, 5) is c3 of lane 6 (g = 1, t = 2)");
