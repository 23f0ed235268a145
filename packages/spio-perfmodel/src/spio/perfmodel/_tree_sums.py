"""A booster's margins on rows of features, through the C function under XGBoost's
Booster.inplace_predict (XGBoosterPredictFromDense), called directly.

Choosing a config scores its space in a few calls of a few hundred microseconds each
(LatencyModel.best_config), and inplace_predict adds about 0.1 ms of Python to each on two
cores: it checks the input against every data library it accepts, builds a class to wrap
each result, and creates a proxy DMatrix for every base margin, whose construction in C
reads the cgroup's CPU quota (25 us). Here the JSON arguments are written directly and each
thread reuses one proxy. The margins equal inplace_predict's to the bit (test_tree_sums.py).

The C functions are XGBoost's public C API, found through its public `xgboost.libpath` (the
library XGBoost itself loaded: opening a loaded library again returns it) and declared
with their argument types. A booster checks the direct path against inplace_predict once,
on a probe row; where the library cannot be found, a function is missing or the probe's
margins differ (another XGBoost than the ones tested), it uses inplace_predict instead.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import weakref
from typing import Any

import numpy as np


class TreeSums:
    """A booster's margins for rows of features: a base margin plus a range of its trees."""

    def __init__(self, booster: Any) -> None:
        self._booster = booster
        self._proxies = threading.local()
        self._lib = _xgboost_library()
        #: Whether calls go to the C API directly (else through inplace_predict).
        self.direct = self._lib is not None and self._agrees_on_a_probe()

    def __call__(
        self, features: np.ndarray, start: int, stop: int, base: np.ndarray | None = None
    ) -> np.ndarray:
        """Trees start ... stop - 1 summed onto base (a margin per row; None: the model's
        base score) for each row of features (float32, a column per booster feature), as
        booster.inplace_predict(features, iteration_range=(start, stop), base_margin=base).
        """
        if not self.direct:
            return self._booster.inplace_predict(
                features, iteration_range=(start, stop), base_margin=base
            )
        return self._direct(features, start, stop, base)

    def _agrees_on_a_probe(self) -> bool:
        """Whether the direct path gives inplace_predict's margins on a row of zeros (with
        and without a base margin); False where the C API refuses the call."""
        from xgboost.core import XGBoostError

        probe = np.zeros((1, self._booster.num_features()), dtype=np.float32)
        try:
            return all(
                np.array_equal(
                    self._direct(probe, 0, 1, base),
                    self._booster.inplace_predict(probe, iteration_range=(0, 1), base_margin=base),
                )
                for base in (np.ones(1, dtype=np.float32), None)
            )
        except (XGBoostError, ValueError, OSError):
            return False

    def _direct(
        self, features: np.ndarray, start: int, stop: int, base: np.ndarray | None
    ) -> np.ndarray:
        features = np.ascontiguousarray(features, dtype=np.float32)
        rows = features.shape[0]
        data = _interface(features)
        # The proxy checks a base margin against its rows: the input goes in first. An empty
        # base margin clears the last call's (the model's base score then).
        margin = np.ascontiguousarray(np.zeros(0) if base is None else base, dtype=np.float32)
        lib: Any = self._lib  # not None: only the direct path gets here
        proxy = self._proxy()
        _check(lib, lib.XGProxyDMatrixSetDataDense(proxy, data))
        _check(lib, lib.XGDMatrixSetInfoFromInterface(proxy, b"base_margin", _interface(margin)))
        config = (
            f'{{"type": 0, "training": false, "iteration_begin": {start}, '
            f'"iteration_end": {stop}, "strict_shape": false, "missing": NaN, "cache_id": 0}}'
        )
        shape = ctypes.POINTER(ctypes.c_uint64)()
        dims = ctypes.c_uint64()
        result = ctypes.POINTER(ctypes.c_float)()
        _check(
            lib,
            lib.XGBoosterPredictFromDense(
                self._booster.handle,
                data,
                config.encode(),
                proxy,
                ctypes.byref(shape),
                ctypes.byref(dims),
                ctypes.byref(result),
            ),
        )
        if dims.value != 1 or shape[0] != rows:
            raise ValueError(f"the booster gives more than one margin for each of {rows} rows")
        # The result lives in the booster's buffer for this thread until its next call.
        margins = np.empty(rows, dtype=np.float32)
        ctypes.memmove(margins.ctypes.data, result, margins.nbytes)
        return margins

    def __reduce__(self) -> tuple[type, tuple[Any]]:
        # A model pickles as its booster does: the proxies are this process's.
        return (TreeSums, (self._booster,))

    def _proxy(self) -> ctypes.c_void_p:
        """This thread's proxy DMatrix: what carries the input and base margin of a call."""
        holder = getattr(self._proxies, "holder", None)
        if holder is None:
            holder = self._proxies.holder = _Proxy(self._lib)
        return holder.handle


class _Proxy:
    """An XGBoost proxy DMatrix, freed with this object."""

    def __init__(self, lib: Any) -> None:
        self.handle = ctypes.c_void_p()
        _check(lib, lib.XGProxyDMatrixCreate(ctypes.byref(self.handle)))
        weakref.finalize(self, lib.XGDMatrixFree, self.handle)


#: The C functions called, with their argument types (XGBoost's c_api.h); each returns 0, or
#: -1 with XGBGetLastError's message.
_SIGNATURES: dict[str, list[Any]] = {
    "XGProxyDMatrixCreate": [ctypes.POINTER(ctypes.c_void_p)],
    "XGProxyDMatrixSetDataDense": [ctypes.c_void_p, ctypes.c_char_p],
    "XGDMatrixSetInfoFromInterface": [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p],
    "XGDMatrixFree": [ctypes.c_void_p],
    "XGBoosterPredictFromDense": [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.POINTER(ctypes.c_uint64)),
        ctypes.POINTER(ctypes.c_uint64),
        ctypes.POINTER(ctypes.POINTER(ctypes.c_float)),
    ],
}


@functools.cache
def _xgboost_library() -> Any | None:
    """XGBoost's C library, its functions declared (_SIGNATURES); None where it cannot be
    found or lacks one of them."""
    from xgboost import libpath

    try:
        lib = ctypes.CDLL(libpath.find_lib_path()[0])
        for name, argtypes in _SIGNATURES.items():
            function = getattr(lib, name)
            function.argtypes = argtypes
            function.restype = ctypes.c_int
        lib.XGBGetLastError.restype = ctypes.c_char_p
    except (OSError, AttributeError, IndexError, libpath.XGBoostLibraryNotFound):
        return None
    return lib


def _check(lib: Any, status: int) -> None:
    """Raise XGBoost's own error where a C call failed."""
    if status != 0:
        from xgboost.core import XGBoostError

        raise XGBoostError(lib.XGBGetLastError().decode("utf-8", "replace"))


def _interface(array: np.ndarray) -> bytes:
    """The array interface (JSON) of a C-contiguous array, as XGBoost's C API reads it."""
    shape = ", ".join(str(extent) for extent in array.shape)
    return (
        f'{{"data": [{array.ctypes.data}, true], "shape": [{shape}], "strides": null, '
        f'"typestr": "{array.dtype.str}", "version": 3}}'
    ).encode()
