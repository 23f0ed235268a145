// The entry point of the spio-dims C++ unit tests; the tests register themselves.
#include "spio_test.h"  // UTEST_MAIN

UTEST_MAIN()
