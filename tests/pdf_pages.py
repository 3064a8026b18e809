"""Read a rendered PDF back as a reader would: each page's text lines and how full the page is.

Text comes from poppler's ``pdftotext -bbox`` (every word with its box), so a cell cut short,
a word drawn over another or a near-empty page shows here as it would on paper. Sections are
the PDF outline's top-level entries (``SectionMark`` in railplan/render/pdf_common.py).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: the running header and the footer sit in these bands (points from the top and the bottom)
HEADER_BAND = 62.0
FOOTER_BAND = 50.0

_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)
_WORD = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>'
)


@dataclass
class Page:
    number: int  # 1-based
    width: float
    height: float
    words: list[tuple[float, float, float, float, str]] = field(default_factory=list)

    def body(self) -> list[tuple[float, float, float, float, str]]:
        """The words between the running header and the footer."""
        return [w for w in self.words if w[1] > HEADER_BAND and w[3] < self.height - FOOTER_BAND]

    def lines(self) -> list[str]:
        """The page's text, one string per line (words of one baseline, left to right)."""
        rows: dict[int, list[tuple[float, str]]] = {}
        for x0, _y0, _x1, y1, text in self.words:
            rows.setdefault(round(y1 * 2), []).append((x0, text))
        return [" ".join(t for _, t in sorted(ws)) for _, ws in sorted(rows.items())]

    def fullness(self) -> float:
        """The share of the body band the page's content reaches down to (0 empty, 1 full)."""
        body = self.body()
        if not body:
            return 0.0
        top, bottom = HEADER_BAND, self.height - FOOTER_BAND
        return (max(w[3] for w in body) - top) / (bottom - top)


def available() -> bool:
    return shutil.which("pdftotext") is not None


def read_pages(pdf: Path) -> list[Page]:
    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    pages = []
    for k, (w, h, body) in enumerate(_PAGE.findall(out), start=1):
        page = Page(k, float(w), float(h))
        for x0, y0, x1, y1, text in _WORD.findall(body):
            page.words.append((float(x0), float(y0), float(x1), float(y1), html.unescape(text)))
        pages.append(page)
    return pages


def section_starts(pdf: Path) -> list[tuple[int, str]]:
    """(1-based first page, title) of every top-level outline entry, in page order."""
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    starts = []
    for entry in reader.outline:
        if isinstance(entry, list):
            continue  # the children of the entry before
        starts.append((reader.get_destination_page_number(entry) + 1, str(entry.title)))
    return sorted(starts)


def sparse_pages(pdf: Path, pages: list[Page], least: float = 0.2) -> list[tuple[int, float]]:
    """Pages filled to less than ``least`` that are not the last page of their section."""
    starts = [p for p, _ in section_starts(pdf)]
    last_of_section = {p - 1 for p in starts[1:]} | {len(pages)}
    return [
        (page.number, round(page.fullness(), 3))
        for page in pages
        if page.number not in last_of_section and page.fullness() < least
    ]
