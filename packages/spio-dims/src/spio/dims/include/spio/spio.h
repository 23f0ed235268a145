// spio-dims: typed dimensions for host C++17, nvcc and NVRTC. Include this one header; the
// device-only parts (tensor-core fragments, ldmatrix, ...) are in spio/spio.cuh.
//
// Every name is in namespace spio; generated types derive from spio types, so the functions
// below (make_coordinates, range) are found by argument-dependent lookup.
#pragma once

#include "spio/macros.h"          // SPIO_HOST_DEVICE, SPIO_DEVICE, SPIO_CUDA
#include "spio/dtypes.h"          // half8, bfloat168; host stand-ins for uint4, float2, ...
#include "spio/dim.h"             // Dim, Fold and their arithmetic
#include "spio/coordinates.h"     // Coordinates, make_coordinates, projection operators
#include "spio/dim_info.h"        // DimInfo
#include "spio/cursor.h"          // Cursor
#include "spio/tensor.h"          // Tensor
#include "spio/compound_index.h"  // CompoundIndex, CompoundIndexFrom, ThreadIdxX ... BlockIdxZ
#include "spio/checkerboard.h"    // CheckerboardIndex
#include "spio/swizzle.h"         // SwizzleIndex
#include "spio/range.h"           // range
