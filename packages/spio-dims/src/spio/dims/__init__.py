"""spio.dims: generate typed-dimension C++ headers from Python specs.

The spec classes are named after the C++ types they declare: `Dim`, `Fold`, `Tensor`,
`CompoundIndex`, `Checkerboard`, `Swizzle`, `Fragment`, with `Dims`, `Strides` and `dtype`
for their arguments. `generate(specs)` returns the header; `parse` and `generate_file` read
specs from the `/*@spio [ ... ] @spio*/` blocks of a source file without executing anything.
docs/dims/generated-code.md is the contract for what is emitted.
"""

from ._checkerboard import Checkerboard
from ._compound_index import CompoundIndex
from ._dim import Dim, Fold
from ._dims import Dims, Strides
from ._dtype import DType, dtype
from ._emit import Spec, generate
from ._errors import (
    DimsError,
    DtypeError,
    SpecError,
    SpecNameError,
    SpecSyntaxError,
    SpecTypeError,
)
from ._fragment import Fragment
from ._generators import Generators
from ._include import include_dir
from ._parse import generate_file, parse, parse_file
from ._swizzle import Swizzle
from ._tensor import Tensor
from ._version import __version__

__all__ = [
    "Checkerboard",
    "CompoundIndex",
    "DType",
    "Dim",
    "Dims",
    "DimsError",
    "DtypeError",
    "Fold",
    "Fragment",
    "Generators",
    "Spec",
    "SpecError",
    "SpecNameError",
    "SpecSyntaxError",
    "SpecTypeError",
    "Strides",
    "Swizzle",
    "Tensor",
    "__version__",
    "dtype",
    "generate",
    "generate_file",
    "include_dir",
    "parse",
    "parse_file",
]
