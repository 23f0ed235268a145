// ldmatrix round trip: load NUM (1, 2 or 4) 8 x 8 matrices of 16-bit elements, transposed when
// TRANS is 1, and write each register half back to the position the PTX ISA says it holds.
// One warp; dst equals src when loads and the documented layout agree.
#include "spio/arch/ldmatrix.cuh"  // ldmatrix, ldmatrix_trans

extern "C" __global__ void ldmatrix_round_trip(const unsigned short* src, unsigned short* dst) {
    __shared__ __align__(16) unsigned short smem[NUM * 64];
    const int lane = threadIdx.x;
    for (int i = lane; i < NUM * 64; i += 32) smem[i] = src[i];
    __syncthreads();

    // Lanes 8 * m ... 8 * m + 7 address the rows of matrix m; the rest repeat valid addresses.
    const unsigned short* row = smem + ((lane / 8) % NUM) * 64 + (lane % 8) * 8;
    unsigned r[NUM];
#if TRANS
    spio::arch::ldmatrix_trans(r, row);
#else
    spio::arch::ldmatrix(r, row);
#endif

    // Register m, half h of lane L: row L / 4, column 2 * (L % 4) + h of matrix m; transposed
    // with .trans.
    for (int m = 0; m < NUM; ++m) {
        for (int h = 0; h < 2; ++h) {
            const int group = lane / 4;
            const int pair = 2 * (lane % 4) + h;
            const int matrix_row = TRANS ? pair : group;
            const int matrix_col = TRANS ? group : pair;
            dst[m * 64 + matrix_row * 8 + matrix_col] =
                static_cast<unsigned short>(r[m] >> (16 * h));
        }
    }
}
