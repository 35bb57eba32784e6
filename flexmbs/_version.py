"""The version of flexmbs (also in ``pyproject.toml``); a leaf module, so that any layer
can read it without importing the package's public API."""

__version__ = "0.1.0"
