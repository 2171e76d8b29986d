"""This package's version (as in pyproject.toml), sent in the User-Agent header."""

__version__ = "0.1.0"
