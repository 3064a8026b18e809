"""The one error hierarchy: every message is a sentence a network engineer can act on."""

from __future__ import annotations


class RailplanError(Exception):
    """Base of every error railplan raises on purpose."""


class SpecError(RailplanError):
    """The cluster spec (file, flags or overrides) is invalid."""


class CatalogError(RailplanError):
    """A catalog file is invalid or a spec names a part the catalog does not have."""


class InfeasibleError(RailplanError):
    """The request is valid but cannot be built; the message names the limit that was hit."""


class DesignFileError(RailplanError):
    """A design.json file cannot be read."""


class FieldInputError(RailplanError):
    """A field input (tool output, results folder, name map, expectations) cannot be used."""


class OutputError(RailplanError):
    """An output file or folder cannot be written (a file in the way, no permission, disk full)."""
