"""spio.torch: see the package README."""

from importlib.metadata import version as _version

__version__ = _version("spio-torch")

__all__ = ["__version__"]
