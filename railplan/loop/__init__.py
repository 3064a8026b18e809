"""Close the loop: check the as-built cabling and grade acceptance-test results against the plan.

Entry points: ``railplan.loop.asbuilt.check_asbuilt(design, lldp=[...], ibnetdiscover=...,
iblinkinfo=..., names=...)`` and ``railplan.loop.grade.grade(design, expectations,
results_dir)``; both return reports with ``to_json()`` (a JSON-ready dict), ``summary_rows()``
and ``to_markdown()``. (``grade`` is not re-exported here so that ``railplan.loop.grade`` stays
the module.) Every input problem raises a ``LoopError`` (a
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
    "load_expectations",
]
