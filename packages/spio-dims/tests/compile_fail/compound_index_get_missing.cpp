// Promise: a compound index answers only for its own dimensions.
// expect: compound index has no dimension
// expect: compound_index_has_dimension<K>
#include "test_types.h"

K wrong() { return BlockIndex(3).get<K>(); }
