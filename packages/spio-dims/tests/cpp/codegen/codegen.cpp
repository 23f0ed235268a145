// Typed code and the hand-written index arithmetic it replaces, in pairs typed_<case> and
// hand_<case>; test_codegen.py checks, at -O2, that each typed function has no more
// instructions than its twin. extern "C" keeps the names plain in the assembly.
#include "test_types.h"  // A, AFolded, C_tile, BlockIndex, ...

namespace {

using ConstA = spio::Tensor<const float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;
using ConstFolded = spio::Tensor<const float, spio::DimInfo<K8, 4, 32>, spio::DimInfo<I, 4, 8>,
                                 spio::DimInfo<K, 8, 1>>;
using Image = spio::Tensor<const float, spio::DimInfo<I, 512, 512>, spio::DimInfo<J, 512, 1>>;

}  // namespace

extern "C" {

// A subscript is one multiply-add.
float typed_subscript(const float* data, int i, int k) { return *ConstA(data)[K(k)][I(i)]; }
float hand_subscript(const float* data, int i, int k) { return data[i * 32 + k]; }

// A folded subscript is the folding a hand-written kernel does (for k >= 0).
float typed_folded(const float* data, int i, int k) { return *ConstFolded(data)[I(i)][K(k)]; }
float hand_folded(const float* data, int i, int k) { return data[(k / 8) * 32 + i * 8 + k % 8]; }

// range() is a counted loop.
float typed_range(const float* data, int n) {
    float sum = 0.0f;
    for (auto k : spio::range(K(n))) sum += data[k.get()];
    return sum;
}
float hand_range(const float* data, int n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += data[k];
    return sum;
}

// A cursor stepped in a loop is a pointer increment.
float typed_step(const float* data, int j, int steps) {
    auto cursor = ConstA(data)[I(1)][K(j)];
    float sum = 0.0f;
    for (int s = 0; s < steps; ++s) {
        sum += *cursor;
        cursor.step(I(1));
    }
    return sum;
}
float hand_step(const float* data, int j, int steps) {
    const float* p = data + 32 + j;
    float sum = 0.0f;
    for (int s = 0; s < steps; ++s) {
        sum += *p;
        p += 32;
    }
    return sum;
}

// A projected comparison tests only the shared dimensions.
bool typed_bounds(int i, int j, int k) {
    const auto world = spio::make_coordinates(I(i), J(j), K(k));
    return world < ConstA::extents();
}
bool hand_bounds(int i, int, int k) { return i < 16 && k < 32; }

// Compound indices are the digit arithmetic of lesson 5 (as lesson 5 writes it by hand).
float typed_compound(const float* data, int block, int thread) {
    return *Image(data)[BlockIndex(block)][ThreadIndex(thread)];
}
float hand_compound(const float* data, int block, int thread) {
    const int block_i16 = block / 32;
    const int block_j16 = block % 32;
    const int thread_i = thread / 16;
    const int thread_j = thread % 16;
    return data[(block_i16 * 16 + thread_i) * 512 + block_j16 * 16 + thread_j];
}

}  // extern "C"
