"""Name rules: which Python spellings become which C++ names, and which are refused.

Generated names live in the global namespace of every translation unit that includes the
header, next to CUDA's built-ins and the C library's macros, so the rules are strict: an
accepted name can never turn into a keyword, a reserved identifier, or a macro.
"""

from __future__ import annotations

import re

from ._dtype import DTYPE_NAMES
from ._errors import SpecNameError, SpecTypeError

# Dimension and fold names appear three times in a fold declaration; past this length a
# declaration no longer fits the 100-column style on two lines.
MAX_DIM_NAME = 32
# Tensor, index and fragment names appear once per declaration.
MAX_SPEC_NAME = 64


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# C++20 keywords are in too, and the identifiers with special meaning (final, override,
# import, module): a header written today should still compile under a newer standard.
CPP_KEYWORDS = _words(
    """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const const_cast consteval constexpr constinit
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    final override import module
    """
)

CUDA_KEYWORDS = _words(
    """
    __global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__
    __noinline__ __forceinline__ __inline_hint__ __launch_bounds__ __grid_constant__
    __cluster_dims__ __align__ __builtin_align__
    """
)

# Names that already mean something at global scope in CUDA C++: namespaces, CUDA's
# built-in variables and vector types, <cstdint>/<cstddef> typedefs.
_VECTOR_BASES = sorted(
    _words("char uchar short ushort int uint long ulong longlong ulonglong float double")
)
RESERVED_NAMES = frozenset(
    [
        "spio",
        "std",
        "cuda",
        "nvcuda",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "dim3",
        "size_t",
        "ptrdiff_t",
        "nullptr_t",
        "max_align_t",
        *(f"{sign}int{bits}_t" for sign in ("", "u") for bits in (8, 16, 32, 64)),
        "intptr_t",
        "uintptr_t",
        *(f"{base}{n}" for base in _VECTOR_BASES for n in (1, 2, 3, 4)),
    ]
)

# Macros of the C and C++ standard headers that an upper-cased dimension could spell.
RESERVED_MACROS = _words(
    """
    NULL EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam TMP_MAX SEEK_SET SEEK_CUR SEEK_END
    EXIT_SUCCESS EXIT_FAILURE RAND_MAX MB_CUR_MAX CLOCKS_PER_SEC
    CHAR_BIT CHAR_MIN CHAR_MAX SCHAR_MIN SCHAR_MAX UCHAR_MAX SHRT_MIN SHRT_MAX USHRT_MAX
    INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN LLONG_MAX ULLONG_MAX
    SIZE_MAX PTRDIFF_MIN PTRDIFF_MAX WCHAR_MIN WCHAR_MAX
    FLT_MAX FLT_MIN FLT_EPSILON DBL_MAX DBL_MIN DBL_EPSILON
    INFINITY NAN HUGE_VAL HUGE_VALF EDOM ERANGE EILSEQ EINVAL
    """
)

_DIM_NAME = re.compile(r"[a-z](?:[a-z0-9_]*[a-z_])?")
_DIMS_KEY = re.compile(r"(?P<base>[a-z](?:[a-z0-9_]*[a-z_])?)(?P<factor>[0-9]+)?")
_SPEC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _require_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise SpecTypeError(f"{what} must be a str; got {type(value).__name__} {value!r}")
    return value


def _refuse_keyword(name: str, what: str) -> None:
    if name in CPP_KEYWORDS:
        raise SpecNameError(f"{what} {name!r} is a C++ keyword; choose another name")
    if name in CUDA_KEYWORDS:
        raise SpecNameError(f"{what} {name!r} is a CUDA keyword; choose another name")


def _refuse_double_underscore(name: str, what: str) -> None:
    # C++ reserves every identifier that contains "__" for the implementation.
    if "__" in name:
        raise SpecNameError(
            f"{what} {name!r} contains '__', which C++ reserves for the implementation"
        )


def check_dim_name(name: object, what: str = "dimension name") -> str:
    """Return `name` if it can name a dimension or a named fold, else raise SpecNameError.

    Allowed: a lower-case identifier that starts with a letter and does not end in digits
    (a trailing number spells an anonymous fold: `k8` is K folded by 8).
    """
    text = _require_str(name, what)
    _refuse_keyword(text, what)
    if not _DIM_NAME.fullmatch(text):
        hint = ""
        if _DIMS_KEY.fullmatch(text):
            hint = f" ({text!r} ends in digits, which spells an anonymous fold in Dims)"
        raise SpecNameError(
            f"{what} {text!r} is not allowed{hint}; a dimension name is a lower-case "
            "identifier that starts with a letter and does not end in a digit, like 'i', "
            "'k', 'block_i' or 'checkers'"
        )
    _check_dim_spelling(text, what)
    return text


def _check_dim_spelling(text: str, what: str) -> None:
    if len(text) > MAX_DIM_NAME:
        raise SpecNameError(
            f"{what} {text!r} has {len(text)} characters; at most {MAX_DIM_NAME} are allowed"
        )
    _refuse_keyword(text, what)
    _refuse_double_underscore(text, what)
    cpp = text.upper()
    if cpp in RESERVED_MACROS:
        raise SpecNameError(
            f"{what} {text!r} would declare the C++ type {cpp}, which is a macro of the C "
            "standard library; choose another name"
        )


def split_dims_key(key: object) -> tuple[str, int]:
    """Split a Dims key into (base dimension, fold factor): `k8` -> ("k", 8), `i` -> ("i", 1).

    Raise SpecNameError for keys that are not a dimension name with an optional fold factor.
    """
    text = _require_str(key, "dimension key")
    _refuse_keyword(text, "dimension key")
    match = _DIMS_KEY.fullmatch(text)
    if match is None:
        raise SpecNameError(
            f"dimension key {text!r} is not allowed; a key is a lower-case dimension name, "
            "optionally followed by a fold factor, like 'i', 'k8' or 'block_i'"
        )
    base, digits = match.group("base"), match.group("factor")
    _check_dim_spelling(text, "dimension key")
    if digits is None:
        return base, 1
    if digits.startswith("0"):
        raise SpecNameError(
            f"dimension key {text!r} has the fold factor {digits!r}; a fold factor is a "
            "positive integer without leading zeros, like 'k8'"
        )
    factor = int(digits)
    if factor == 1:
        raise SpecNameError(
            f"dimension key {text!r} folds {base!r} by 1, which is {base!r} itself; write {base!r}"
        )
    _check_dim_spelling(base, "dimension name")
    return base, factor


def dim_type(key: str) -> str:
    """Return the C++ type of a Dims key or dimension name: the upper-case spelling."""
    return key.upper()


def check_spec_name(name: object, what: str) -> str:
    """Return `name` if it can name a generated type (tensor, index, ...), else raise.

    Allowed: an identifier that starts with a letter, kept as given, that is not a C++ or
    CUDA keyword, does not contain '__', and does not shadow a global CUDA C++ name.
    """
    text = _require_str(name, what)
    _refuse_keyword(text, what)
    if not _SPEC_NAME.fullmatch(text):
        raise SpecNameError(
            f"{what} {text!r} is not a valid name; allowed: an identifier of letters, digits "
            "and '_' that starts with a letter, like 'A', 'C_tile' or 'BlockIndex'"
        )
    if len(text) > MAX_SPEC_NAME:
        raise SpecNameError(
            f"{what} {text!r} has {len(text)} characters; at most {MAX_SPEC_NAME} are allowed"
        )
    _refuse_double_underscore(text, what)
    if text in RESERVED_NAMES or text in RESERVED_MACROS:
        raise SpecNameError(
            f"{what} {text!r} is already a name at global scope in CUDA C++; choose another"
        )
    if text in DTYPE_NAMES:
        # A str dtype of a Tensor is looked up as a data type first, so a spec of this
        # name could never be referred to.
        raise SpecNameError(f"{what} {text!r} is the name of a dtype; choose another name")
    return text
