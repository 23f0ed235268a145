// Promise: a projected comparison needs at least one shared dimension (else it would be
// vacuously true).
// expect: coordinates share no dimension
#include "test_types.h"

bool wrong() { return spio::make_coordinates(I(1)) < spio::make_coordinates(J(1)); }
