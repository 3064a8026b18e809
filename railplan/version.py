"""The package version, read by the facade, the PDFs and the packaging metadata."""

__version__ = "0.1.0"
