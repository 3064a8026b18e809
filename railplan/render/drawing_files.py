"""A reportlab Drawing as the bytes of an SVG, PDF or PNG file (figure and chart outputs).

SVG and PDF come from reportlab's own renderers (``renderSVG``, ``renderPDF`` with the
invariant flag, so the same drawing gives the same bytes). PNG needs ``renderPM`` and its
``rlPyCairo`` backend, an optional package: without it a .png is refused up front.
"""

from __future__ import annotations

from pathlib import Path

from reportlab.graphics.shapes import Drawing

from railplan.errors import SpecError

FORMATS = ("svg", "pdf", "png")


def png_available() -> bool:
    """Whether reportlab can draw PNG here (its renderPM backend, rlPyCairo, imports)."""
    try:
        import rlPyCairo  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def check_format(path: Path, flag: str) -> str:
    """The output format a path names (``svg``, ``pdf``, ``png``); SpecError for any other,
    or for .png when reportlab cannot draw PNG here."""
    kind = path.suffix.lower().lstrip(".")
    if kind not in FORMATS:
        raise SpecError(f"{flag} {path}: give a file name ending .svg, .pdf or .png")
    if kind == "png" and not png_available():
        raise SpecError(
            f"{flag} {path}: PNG needs reportlab's rlPyCairo backend (pip install rlPyCairo); "
            "write .svg or .pdf instead"
        )
    return kind


def drawing_bytes(drawing: Drawing, kind: str) -> bytes:
    """The file's bytes; ``kind`` is one of ``FORMATS`` (see ``check_format``)."""
    if kind == "svg":
        from reportlab.graphics import renderSVG

        text: str = renderSVG.drawToString(drawing)
        return text.encode("utf-8")
    if kind == "pdf":
        from reportlab.graphics import renderPDF

        data: bytes = renderPDF.drawToString(drawing, invariant=1)
        return data
    from reportlab.graphics import renderPM

    png: bytes = renderPM.drawToString(drawing, fmt="PNG", dpi=144)
    return png
