"""Close the loop: check the as-built cabling and grade acceptance-test results against the plan.

Entry points: ``railplan.field.asbuilt.check_asbuilt(design, lldp=[...], ibnetdiscover=...,
iblinkinfo=..., names=...)`` and ``railplan.field.grade.grade(design, expectations,
results_dir)``; both return reports with ``to_json()`` (a JSON-ready dict) and ``summary_rows()``;
``railplan.render.field_report`` writes them as Markdown. (``grade`` is not re-exported here so that ``railplan.field.grade`` stays
the module.) Every input problem raises a ``FieldInputError`` (a
``RailplanError``); unparseable tool output raises its subclass ``ParseError``, whose message
names the file and the line.
"""

from __future__ import annotations

from railplan.field.asbuilt import AsBuiltReport, check_asbuilt
from railplan.field.common import FieldInputError, ParseError
from railplan.field.grade import GradeReport, load_expectations
from railplan.testplan.expectation import Expectation

__all__ = [
    "AsBuiltReport",
    "Expectation",
    "FieldInputError",
    "GradeReport",
    "ParseError",
    "check_asbuilt",
    "load_expectations",
]
