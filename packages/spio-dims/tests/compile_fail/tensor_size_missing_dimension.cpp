// Promise: size<D>() needs a dimension of the tensor.
// expect: tensor has no dimension of this base
// expect: tensor_has_dimension<J>
#include "test_types.h"

J wrong() { return A::size<J>(); }
