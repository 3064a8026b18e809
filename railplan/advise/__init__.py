"""What should I buy: search the design space for the cheapest fabric that meets requirements."""

from __future__ import annotations

from railplan.advise.candidates import Candidate, candidates
from railplan.advise.requirements import parse_requires, requirements_of
from railplan.advise.search import Recommendation, recommend

__all__ = [
    "Candidate",
    "Recommendation",
    "candidates",
    "parse_requires",
    "recommend",
    "requirements_of",
]
