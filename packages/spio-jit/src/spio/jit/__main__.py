"""`python -m spio.jit` runs the spio-jit command line."""

import sys

from spio.jit._cli import main

sys.exit(main())
