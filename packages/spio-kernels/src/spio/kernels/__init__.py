"""spio.kernels: see the package README."""

from importlib.metadata import version as _version

__version__ = _version("spio-kernels")

__all__ = ["__version__"]
