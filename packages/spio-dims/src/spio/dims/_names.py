"""Name rules: which Python spellings become which C++ names, and which are refused.

Generated names are visible at global scope in every translation unit that includes the
header (from an unnamed namespace), next to CUDA's built-ins, the C library, spio's own
functions and everyone's macros, so the rules are strict: an accepted name can never turn
into a keyword, a reserved identifier, or a macro, nor clash with a global function or type
that CUDA C++ declares or hide a spio function from argument-dependent lookup.
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

# Functions and types that CUDA C++ (NVRTC declares them without any include; spio's headers
# pull in cuda_fp16.h and cuda_bf16.h) or the C library declare at global scope: a type of
# the same name makes every use of either ambiguous or ill-formed. The CUDA names are those
# of CUDA 13's math, atomic and device-function headers that NVRTC 13 refuses to redeclare.
GLOBAL_FUNCTIONS = _words(
    """
    abs labs llabs min max umin umax llmin llmax ullmin ullmax
    acos acosf acosh acoshf asin asinf asinh asinhf atan atanf atan2 atan2f atanh atanhf
    cbrt cbrtf rcbrt rcbrtf ceil ceilf copysign copysignf cos cosf cosh coshf cospi cospif
    cyl_bessel_i0 cyl_bessel_i0f cyl_bessel_i1 cyl_bessel_i1f
    erf erff erfc erfcf erfcinv erfcinvf erfcx erfcxf erfinv erfinvf
    exp expf exp10 exp10f exp2 exp2f expm1 expm1f fabs fabsf fdim fdimf fdivide fdividef
    floor floorf fma fmaf fmax fmaxf fmin fminf fmod fmodf frexp frexpf hypot hypotf
    rhypot rhypotf ilogb ilogbf isfinite isinf isnan j0 j0f j1 j1f jn jnf ldexp ldexpf
    lgamma lgammaf llrint llrintf llround llroundf log logf log10 log10f log1p log1pf log2
    log2f logb logbf lrint lrintf lround lroundf modf modff nan nanf nearbyint nearbyintf
    nextafter nextafterf norm normf norm3d norm3df norm4d norm4df rnorm rnormf rnorm3d
    rnorm3df rnorm4d rnorm4df normcdf normcdff normcdfinv normcdfinvf pow powf remainder
    remainderf remquo remquof rint rintf round roundf rsqrt rsqrtf scalbln scalblnf scalbn
    scalbnf signbit sin sinf sincos sincosf sincospi sincospif sinh sinhf sinpi sinpif
    sqrt sqrtf tan tanf tanh tanhf tgamma tgammaf trunc truncf y0 y0f y1 y1f yn ynf
    dadd dmul dsub double2int double2ll double2uint double2ull float2double int2double
    ll2double uint2double ull2double
    all any ballot syncthreads_and syncthreads_count syncthreads_or clock clock64
    nv_half nv_half2 nv_bfloat16 nv_bfloat162
    printf fprintf sprintf snprintf puts putchar malloc calloc realloc free memcpy memmove
    memset memcmp strlen abort exit atexit rand srand time assert errno stdin stdout stderr
    main
    """
) | frozenset(
    f"atomic{operation}{scope}"
    for operation in ("Add", "Sub", "Exch", "Min", "Max", "Inc", "Dec", "CAS", "And", "Or", "Xor")
    for scope in ("", "_block", "_system")
)

# spio's functions that kernels call unqualified, found by argument-dependent lookup: a type
# of the same name at global scope is found first and turns range(K(4)) into a constructor
# call of that type.
ADL_FUNCTIONS = _words(
    """
    range make_coordinates mma zero fill load_tile load_tile_trans load_pair load_pair_trans
    """
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
    INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL EDOM ERANGE EILSEQ EINVAL
    FP_NAN FP_INFINITE FP_ZERO FP_SUBNORMAL FP_NORMAL FP_FAST_FMA FP_FAST_FMAF FP_ILOGB0
    FP_ILOGBNAN MATH_ERRNO MATH_ERREXCEPT
    M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2
    M_SQRT1_2
    """
)
# The limits of <cstdint>: INT32_MAX, UINT_FAST8_MAX, INTMAX_C, SIG_ATOMIC_MIN, ...
_STDINT_MACRO = re.compile(
    r"U?INT(?:_LEAST|_FAST)?(?:8|16|32|64)_(?:MIN|MAX|C)|U?INTMAX_(?:MIN|MAX|C)"
    r"|U?INTPTR_(?:MIN|MAX)|(?:PTRDIFF|SIG_ATOMIC|WCHAR|WINT)_(?:MIN|MAX)"
)
# spio's own macros (SPIO_CUDA, SPIO_HOST_DEVICE, ...) take this prefix, now and later.
SPIO_MACRO_PREFIX = "SPIO_"

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
    macro = _macro_owner(cpp)
    if macro is not None:
        raise SpecNameError(
            f"{what} {text!r} would declare the C++ type {cpp}, which is {macro}; choose "
            "another name"
        )


def _macro_owner(cpp: str) -> str | None:
    """Say whose macro the C++ name `cpp` is, or return None if it is no known macro."""
    if cpp.startswith(SPIO_MACRO_PREFIX):
        return f"in the {SPIO_MACRO_PREFIX}* names spio keeps for its macros (SPIO_CUDA, ...)"
    if cpp in RESERVED_MACROS or _STDINT_MACRO.fullmatch(cpp):
        return "a macro of the C standard library"
    return None


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
    CUDA keyword, does not contain '__', is no macro (the C library's, `SPIO_*`), does not
    shadow a global name of CUDA C++ or the C library (`main`, `min`, `printf`, ...), and is
    not a spio function that kernels call unqualified (`range`, `mma`, ...).
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
    macro = _macro_owner(text)
    if macro is not None:
        raise SpecNameError(f"{what} {text!r} is {macro}; choose another name")
    if text in RESERVED_NAMES or text in GLOBAL_FUNCTIONS:
        raise SpecNameError(
            f"{what} {text!r} is already a name at global scope in CUDA C++ or the C library; "
            "choose another"
        )
    if text in ADL_FUNCTIONS:
        raise SpecNameError(
            f"{what} {text!r} is the name of a spio function that kernels call unqualified "
            f"({', '.join(sorted(ADL_FUNCTIONS))}); a type of that name would hide it, so "
            f"{text}(...) would construct the type; choose another name"
        )
    if text in DTYPE_NAMES:
        # A str dtype of a Tensor is looked up as a data type first, so a spec of this
        # name could never be referred to.
        raise SpecNameError(f"{what} {text!r} is the name of a dtype; choose another name")
    return text
