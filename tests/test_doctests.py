"""The examples in the library's docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import railplan

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(railplan.__path__, "railplan.")
    if ".tui" not in m.name and m.name != "railplan.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
