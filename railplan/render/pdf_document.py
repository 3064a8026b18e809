"""The PDF document frame: page templates, running header and footer, page x of y, render()."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reportlab.lib.pagesizes import landscape
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    NextPageTemplate,
    PageBreak,
    PageTemplate,
    Spacer,
)
from reportlab.platypus.doctemplate import ActionFlowable

from railplan.render.pdf_canvas import CompressingCanvas
from railplan.render.pdf_common import (
    BOLD,
    FONT,
    FOOTER_H,
    GREY,
    HEADER_H,
    INK,
    MARGIN,
    PAGE_SIZES,
    RULE,
    Progress,
    SectionMark,
    draw_string,
)
from railplan.version import __version__


@dataclass(frozen=True)
class DocInfo:
    """What every page says about the document."""

    title: str
    design: str
    revision: str
    design_hash: str
    page_size: str = "a4"


TOTAL_FORM = "railplanPageTotal"
#: flowables that put nothing of a section's content on the page
_FURNITURE = (SectionMark, ActionFlowable, Spacer)  # CondPageBreak is a Spacer


class _NumberedCanvas(CompressingCanvas):
    """Writes the page total once, at the end, as a form every footer refers to."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["invariant"] = 1
        super().__init__(*args, **kwargs)
        self.pages = 0

    def showPage(self) -> None:
        self.pages += 1
        super().showPage()

    def save(self) -> None:
        self.beginForm(TOTAL_FORM)
        self.setFont(FONT, 7.5)
        self.setFillColor(GREY)
        self.drawString(0, 0, str(self.pages))
        self.endForm()
        super().save()


class Document(BaseDocTemplate):
    """Portrait and landscape page templates sharing one header and footer."""

    def __init__(self, out: Any, info: DocInfo, progress: Progress | None = None) -> None:
        size = PAGE_SIZES[info.page_size]
        super().__init__(
            out,
            pagesize=size,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=MARGIN + HEADER_H,
            bottomMargin=MARGIN + FOOTER_H,
            title=f"{info.title}: {info.design}",
            author="railplan",
            creator=f"railplan {__version__}",
            producer="railplan (reportlab)",
            invariant=1,
        )
        self.info = info
        self.section = ""
        self.subsection = ""
        self._page_subs: list[str] = []
        self._page_drawn = False
        self.progress = progress
        self.pages_done = 0
        templates = []
        for name, page in (("portrait", size), ("landscape", landscape(size))):
            w, h = page
            frame = Frame(
                MARGIN,
                MARGIN + FOOTER_H,
                w - 2 * MARGIN,
                h - 2 * MARGIN - HEADER_H - FOOTER_H,
                id=name,
                leftPadding=0,
                rightPadding=0,
                topPadding=0,
                bottomPadding=0,
            )
            templates.append(
                PageTemplate(
                    id=name,
                    frames=[frame],
                    pagesize=page,
                    onPage=self._page_start,
                    onPageEnd=self._decorate,
                )
            )
        self.addPageTemplates(templates)

    def frame_size(self, orientation: str) -> tuple[float, float]:
        """Width and height of the text frame of a portrait or landscape page."""
        size = PAGE_SIZES[self.info.page_size]
        w, h = landscape(size) if orientation == "landscape" else size
        return w - 2 * MARGIN, h - 2 * MARGIN - HEADER_H - FOOTER_H

    def afterFlowable(self, flowable: Flowable) -> None:
        if isinstance(flowable, SectionMark):
            if flowable.level == 0:
                self.section, self.subsection = flowable.title, ""
                self._page_subs = [] if not self._page_drawn else self._page_subs
            else:
                self.subsection = flowable.title
                # a subsection opening at the top of the page replaces the one carried over
                self._page_subs = [*(self._page_subs if self._page_drawn else []), flowable.title]
        elif not isinstance(flowable, _FURNITURE):
            self._page_drawn = True

    def _page_start(self, c: Any, doc: Any) -> None:
        # the subsection open at the end of the last page goes on only if its content does
        self._page_subs = [self.subsection] if self.subsection else []
        self._page_drawn = False

    def _running_title(self) -> str:
        """Section, and the subsections whose content this page holds (``Rack R0101 to Rack
        R0102``): one opened at the top of the page replaces the one before it."""
        subs = self._page_subs
        if not subs:
            return self.section
        sub = subs[0] if len(subs) == 1 else f"{subs[0]} to {subs[-1]}"
        return f"{self.section}: {sub}"

    def _decorate(self, c: Any, doc: Any) -> None:
        w, h = c._pagesize
        info = self.info
        c.saveState()
        c.setStrokeColor(RULE)
        c.setLineWidth(0.5)
        top = h - MARGIN - HEADER_H + 2.5 * mm
        c.line(MARGIN, top, w - MARGIN, top)
        c.setFillColor(INK)
        c.setFont(BOLD, 9)
        draw_string(c, MARGIN, top + 2 * mm, f"{info.design}  |  {info.title}")
        c.setFont(FONT, 8)
        draw_string(c, w - MARGIN, top + 2 * mm, self._running_title(), "right")
        base = MARGIN + FOOTER_H - 3 * mm
        c.line(MARGIN, base, w - MARGIN, base)
        c.setFillColor(GREY)
        c.setFont(FONT, 7.5)
        draw_string(
            c,
            MARGIN,
            MARGIN * 0.55,
            f"revision {info.revision}  |  design {info.design_hash}  |  railplan {__version__}",
        )
        label = f"page {c.getPageNumber()} of "
        x = w - MARGIN - 12 * mm - stringWidth(label, FONT, 7.5)
        draw_string(c, x, MARGIN * 0.55, label)
        c.translate(w - MARGIN - 12 * mm, MARGIN * 0.55)
        c.doForm(TOTAL_FORM)
        c.restoreState()
        self.pages_done += 1
        if self.progress is not None:
            self.progress(info.title, self.pages_done, 0)


def render(
    story: Sequence[Flowable], info: DocInfo, progress: Progress | None = None
) -> tuple[bytes, int]:
    """The PDF bytes of ``story`` and its page count."""
    buf = io.BytesIO()
    doc = Document(buf, info, progress)
    made: list[_NumberedCanvas] = []

    def maker(*args: Any, **kwargs: Any) -> _NumberedCanvas:
        c = _NumberedCanvas(*args, **kwargs)
        made.append(c)
        return c

    doc.build(list(story), canvasmaker=maker)
    return buf.getvalue(), made[0].pages if made else 0


def landscape_next() -> list[Flowable]:
    return [NextPageTemplate("landscape"), PageBreak()]


def portrait_next() -> list[Flowable]:
    return [NextPageTemplate("portrait"), PageBreak()]
