// Promise: get<D>() needs D's base among the coordinates.
// expect: coordinates have no dimension
// expect: coordinates_have_dimension<K>
#include "test_types.h"

K wrong() { return spio::make_coordinates(I(1), J(2)).get<K>(); }
