"""Close the loop: check the as-built cabling and grade acceptance-test results against the plan.

Entry points: ``check_asbuilt(design, lldp=[...], ibnetdiscover=..., iblinkinfo=..., names=...)``
and ``grade(design, expectations, results_dir)``; both return reports with ``to_json()`` (a
JSON-ready dict) and ``to_markdown()``. Every input problem raises a ``LoopError`` (a
``RailplanError``); unparseable tool output raises its subclass ``ParseError``, whose message
names the file and the line.
"""

from __future__ import annotations

from railplan.loop._common import LoopError, ParseError
from railplan.loop.asbuilt import AsBuiltReport, check_asbuilt
from railplan.loop.grade import (
    Expectation,
    GradeReport,
    expectations_from_plan,
    grade,
    load_expectations,
)

__all__ = [
    "AsBuiltReport",
    "Expectation",
    "GradeReport",
    "LoopError",
    "ParseError",
    "check_asbuilt",
    "expectations_from_plan",
    "grade",
    "load_expectations",
]
