// discard_line on a GPU: a reduction that reads every line of its partial sums once and then
// drops the odd lines from L2; the even lines must keep their values (the drop touches only
// its own 128 bytes).
#include "spio/arch/l2.cuh"  // discard_line, kL2LineBytes

// One warp per line pair: sums[line] = the sum of its 32 floats; odd lines are discarded
// after every lane has read them.
extern "C" __global__ void sum_then_discard_odd(const float* lines, float* sums) {
    constexpr int kFloats = spio::arch::kL2LineBytes / 4;
    const int line = blockIdx.x;
    const float value = lines[line * kFloats + threadIdx.x];
    float sum = value;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) sums[line] = sum;
    __syncwarp();
    if (threadIdx.x == 0 && line % 2 == 1) spio::arch::discard_line(&lines[line * kFloats]);
}
