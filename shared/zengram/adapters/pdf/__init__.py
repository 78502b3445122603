"""The `PdfTextExtractor` port on pypdf (pure Python, no system libraries), imported on first use."""

from __future__ import annotations

import io
import logging


class PypdfTextExtractor:
    def pages(self, content: bytes) -> list[str]:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError

        logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed-but-readable files warn per object
        try:
            reader = PdfReader(io.BytesIO(content))
            return [page.extract_text() or "" for page in reader.pages]
        except (PdfReadError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"not a readable PDF: {error}") from error
