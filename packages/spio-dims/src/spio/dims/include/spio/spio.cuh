// spio-dims for device code: the host/device core and the device-only parts, in one include.
//
// Generated headers include it after spio/spio.h when they declare a Fragment; kernels may
// include it directly. Everything here needs NVRTC or nvcc, for sm_80 or newer.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

#include "spio/spio.h"               // the core: Dim, Fold, Tensor, Cursor, Coordinates, range, ...
#include "spio/arch/async_copy.cuh"  // cp_async_cg_16, cp_async_commit_group, cp_async_wait_group
#include "spio/arch/convert.cuh"     // to_half2, to_bfloat162, as_register
#include "spio/arch/grid_barrier.cuh"     // grid_barrier (cooperative launches)
#include "spio/arch/grid_dependency.cuh"  // wait_for_previous_grids, allow_next_grid_launch
#include "spio/arch/l2.cuh"               // discard_line
#include "spio/arch/lane.cuh"             // lane_id
#include "spio/arch/ldmatrix.cuh"         // ldmatrix, ldmatrix_trans
#include "spio/arch/mma.cuh"              // mma_m16n8k8_f16, ..., mma_m16n8k16_bf16
#include "spio/fragment.cuh"              // Fragment, mma on fragments, lane maps
#include "spio/mma_tile.cuh"              // mma, load_tile, zero, fill on register tiles
