"""A reportlab canvas that compresses each finished page in a background thread.

reportlab deflates every page stream when the document is saved, one after the other; the
sheets at 16k GPUs have 4,000 pages of table operators. This canvas hands each page's stream
to a worker thread as soon as the page is finished (``zlib`` releases the GIL while it
deflates, so the next pages are drawn meanwhile) and gives the page the stream object
reportlab would have made, whose filter returns the worker's result: the same call on the
same bytes, so the PDF is byte-identical; only when it is computed differs.
"""

from __future__ import annotations

import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from reportlab import rl_config
from reportlab.pdfbase import pdfdoc
from reportlab.pdfgen import canvas as rl_canvas


class _Deflated:
    """reportlab's ``PDFZCompress`` filter, its result for one stream computed ahead."""

    pdfname = pdfdoc.PDFZCompress.pdfname

    def __init__(self, source: str, result: Future[bytes]) -> None:
        self.source = source
        self.result = result

    def encode(self, text: Any) -> bytes:
        if text is self.source:
            return self.result.result()
        return pdfdoc.PDFZCompress.encode(text)  # pragma: no cover - another stream

    def decode(self, encoded: bytes) -> bytes:  # pragma: no cover - reportlab's interface
        return zlib.decompress(encoded)


def _deflate(text: str) -> bytes:
    return zlib.compress(text.encode("utf8"))  # as PDFStreamFilterZCompress.encode


class CompressingCanvas(rl_canvas.Canvas):
    """``Canvas`` whose finished pages are deflated by a worker thread while drawing goes on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deflater: ThreadPoolExecutor | None = None

    def showPage(self) -> None:
        super().showPage()
        page = self._doc.Pages.pages[-1]
        stream = page.stream
        if not (page.compression and stream and not page.Contents):
            return  # reportlab builds this page's stream object itself, as always
        if self._deflater is None:
            self._deflater = ThreadPoolExecutor(1, thread_name_prefix="railplan-deflate")
        contents = pdfdoc.PDFStream()  # what PDFPage.check_format would make
        deflated = _Deflated(stream, self._deflater.submit(_deflate, stream))
        # reportlab's filters, applied last to first: deflate, then (by default) ASCII85
        contents.filters = [pdfdoc.PDFBase85Encode, deflated] if rl_config.useA85 else [deflated]
        contents.content = stream
        contents.__Comment__ = "page stream"
        page.Contents = contents

    def save(self) -> None:
        try:
            super().save()
        finally:
            if self._deflater is not None:
                self._deflater.shutdown(wait=True, cancel_futures=True)
                self._deflater = None
