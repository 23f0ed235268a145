// The calling thread's lane within its warp.
//
// Fragment lane maps (spio/fragment.cuh) are functions of the lane. threadIdx.x % 32 equals the
// lane only when the block's x extent is a multiple of 32; %laneid is always right:
//
//     const int lane = spio::arch::lane_id();  // 0 ... 31
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

namespace spio::arch {

// The lane (0 ... 31) of the calling thread, read from %laneid.
__device__ __forceinline__ int lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;\n" : "=r"(lane));
    // Lets the compiler fold lane / 8, lane % 4, ... into shifts and masks.
    __builtin_assume(lane < 32u);
    return static_cast<int>(lane);
}

}  // namespace spio::arch
