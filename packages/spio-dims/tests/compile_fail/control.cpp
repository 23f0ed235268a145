// The positive control: the valid counterpart of every case in this folder compiles, so each
// case fails for its own reason and not for a broken include.
#include "test_types.h"

bool compare() { return I(5) == I(5) && K8(1) < K(9); }
auto add() { return I(3) + I(4) + I(1) * 3; }
I explicit_dimension() { return I(3); }
int explicit_int() { return I(3).get(); }
auto named() { return BLOCK_I(1) + BLOCK_I(2); }
K8 coarser_in_place() {
    K8 k8(1);
    k8 += K16(1);
    return k8;
}
uint4* smem_subscript(uint4* smem) { return SmemA(smem)[I16(1)][K16(1)].get(); }
float* cursor_step(float* data) {
    auto b = B(data)[K(1)];
    b.step(J(1));
    return b.get();
}
float* typed_subscript(float* data) { return A(data)[I(3)].get(); }
I size() { return A::size<I>(); }
using K12 = spio::Fold<K, 12>;
using K24 = spio::Fold<K, 24>;
using Nested = spio::Tensor<float, spio::DimInfo<K24, 2, 12>, spio::DimInfo<K12, 2, 1>>;
int nested() { return Nested::storage_size() + spio::DimInfo<I, 4, 1>::size; }
using ConstA = spio::Tensor<const float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;
float read(const float* data) { return *ConstA(data)[I(1)]; }
ConstA to_const(float* data) {
    ConstA a = A(data);
    return a;
}
bool compare_shared() { return spio::make_coordinates(I(1), J(1)) < spio::make_coordinates(J(2)); }
J get_present() { return spio::make_coordinates(I(1), J(2)).get<J>(); }
I16 index_get() { return BlockIndex(3).get<I16>(); }
int thread_index() { return ThreadIndex(3).get(); }
int range_one_dimension() {
    int n = 0;
    for (auto i : spio::range(I(0), I(4))) n += i.get();
    return n;
}
int checker() { return SmemChecker(I(5), K8(1)).get(); }
int swizzle() { return SmemSwizzle(I(5), K8(1)).get(); }
float* projected_subscript(float* data) {
    return A(data)[spio::make_coordinates(I(1), J(1))].get();
}
K8 cast_to_fold() { return K(16).cast<K8>(); }
using K16OfK = spio::Fold<K, 16>;
int fold_of_dimension() { return K16OfK(1).get(); }
using Broad = spio::Tensor<float, spio::DimInfo<I, 4, 1>>;
int positive_stride() { return Broad::storage_size(); }
using EightBanks = spio::CheckerboardIndex<8, I, K8, CHECKERS>;
int power_of_two_banks() { return EightBanks(I(1), K8(0)).get(); }
I scaled_by_int() { return I(3) * 2 + I(static_cast<int>(3.7)); }
I postfix() {
    I i(0);
    i++;
    return i--;
}
bool cursors_compare(float* data) { return A(data)[I(1)][K(2)] == A(data)[K(2)][I(1)]; }
