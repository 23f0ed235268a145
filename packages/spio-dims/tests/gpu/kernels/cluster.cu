// Cluster kernels: each block of a cluster of BLOCKS reads every other block's shared memory.
#include "spio/arch/cluster.cuh"  // cluster_block_rank, cluster_sync, load_from_block

// Block b holds part[t] = src[b][t] in shared memory. After the barrier, thread t of block b
// writes, for each rank q of the cluster, dst[b][q][t] = the float4 block q holds at t, and
// ranks[b] = b's cluster rank. The second barrier keeps every block alive until all reads are
// done.
extern "C" __global__ void __cluster_dims__(BLOCKS, 1, 1)
    cluster_exchange(const float4* src, float4* dst, int* ranks) {
    __shared__ float4 part[32];
    const int t = threadIdx.x;
    const int b = blockIdx.x;
    part[t] = src[32 * b + t];
    spio::arch::cluster_sync();
    for (unsigned q = 0; q < BLOCKS; ++q) {
        dst[(32 * b + t) * BLOCKS + q] = spio::arch::load_from_block(&part[t], q);
    }
    if (t == 0) ranks[b] = static_cast<int>(spio::arch::cluster_block_rank());
    spio::arch::cluster_sync();
}
