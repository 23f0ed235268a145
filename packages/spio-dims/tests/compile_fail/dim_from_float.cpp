// Promise: a dimension counts in ints; I(3.7) would silently be I(3) (regression, N5).
// expect: deleted
#include "test_types.h"

I wrong() { return I(3.7); }
