// Three rounds separated by grid barriers: every block publishes a value, reads its neighbour's
// after the barrier, and overwrites its own only after another barrier, so a barrier that let
// a block through early would show as a stale or a future value in `seen`.
#include "spio/arch/grid_barrier.cuh"

extern "C" __global__ void neighbours_in_rounds(unsigned int* counter, int* values, int* seen) {
    const int next = (blockIdx.x + 1) % gridDim.x;
    if (threadIdx.x == 0) values[blockIdx.x] = static_cast<int>(blockIdx.x + 1);
    spio::arch::grid_barrier(counter);
    if (threadIdx.x == 0) seen[blockIdx.x] = __ldcg(values + next);
    spio::arch::grid_barrier(counter);
    if (threadIdx.x == 0) values[blockIdx.x] = -static_cast<int>(blockIdx.x + 1);
    spio::arch::grid_barrier(counter);
    if (threadIdx.x == 0) seen[gridDim.x + blockIdx.x] = __ldcg(values + next);
}
