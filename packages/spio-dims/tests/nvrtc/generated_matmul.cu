// The device parts with a generated header: the seed's matmul spec (generator golden
// matmul.h, included by name) driving a warp's A tile load from the checkerboard-swizzled
// shared tile, a tile mma, and the epilogue's to_half2 into the C staging tensor.
#include "matmul.h"  // generated: I, J, K, folds, SmemA, SmemChecker, AFrag ... CTile, SmemC

extern "C" __global__ void matmul_warp_step(int ping) {
    __shared__ uint4 smem_a[SmemA::storage_size()];
    __shared__ __half2 smem_c[SmemC::storage_size()];
    const int lane = spio::arch::lane_id();

    AFrag a_data[ATile::storage_size()];
    BFrag b_data[BTile::storage_size()];
    CFrag c_data[CTile::storage_size()];
    const auto a_tile = ATile(a_data);
    const auto b_tile = BTile(b_data);
    const auto c_tile = CTile(c_data);
    zero(c_tile);
    fill(b_tile, __float2half(1.0f));

    // The checkerboard places each lane's 16-byte row; load_tile adds the fragment folds.
    const auto origin = AFrag::ldmatrix_origin(lane);
    load_tile(a_tile, SmemA(smem_a)[PING(ping)][SmemChecker(origin.get<I>(), origin.get<K8>())]);
    mma(a_tile, b_tile, c_tile, c_tile);

    const auto c_store = SmemC(smem_c);
    for (auto i16 : spio::range(CTile::size<I16>())) {
        for (auto j8 : spio::range(CTile::size<J8>())) {
            for (int p = 0; p < CFrag::size() / 2; ++p) {
                *c_store[i16][j8][CFrag::coordinates(lane, 2 * p)] = c_tile[i16][j8]->to_half2(p);
            }
        }
    }
}
