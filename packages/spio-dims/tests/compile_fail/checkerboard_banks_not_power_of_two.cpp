// Promise: a checkerboard's bank line holds a power of two of cells, as the generator and the
// docs say (6 compiled) (regression, N4).
// expect: a bank line must hold a power of two of cells
#include "test_types.h"

using SixBanks = spio::CheckerboardIndex<6, I, K8, CHECKERS>;

int wrong() { return SixBanks(I(1), K8(0)).get(); }
