// Promise: a projected subscript shares at least one dimension with the tensor; one that shares
// none would apply nothing, which is a wrong index, not a no-op (regression, P1).
// expect: subscript coordinates share no dimension with the tensor
#include "test_types.h"

float* wrong(float* data) { return A(data)[spio::make_coordinates(J(1))].get(); }
