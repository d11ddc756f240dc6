"""Sphinx extension: the link check of the built site, internal links only (no network).

After an HTML build, every ``href``/``src`` of every page that points inside the site
must name a file that exists and, with a ``#fragment``, an ``id`` on that page; each
broken one is a warning (so ``sphinx-build -W`` fails). External links are not followed.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            elif name in ("href", "src") and value and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def check(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    pages: dict[Path, _Page] = {}

    def parse(path: Path) -> _Page:
        if path not in pages:
            page = _Page()
            page.feed(path.read_text(encoding="utf-8", errors="replace"))
            pages[path] = page
        return pages[path]

    broken = 0
    for html in sorted(out.rglob("*.html")):
        if html.parent.name in ("_modules",) or "_modules" in html.parts:
            continue  # viewcode's source pages: their anchors are generated together
        for link in parse(html).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("//", "mailto:", "javascript:")):
                continue
            target = html if not parts.path else (html.parent / unquote(parts.path))
            target = target.resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                logger.warning("%s: broken link %s (no such file)", html.relative_to(out), link)
                broken += 1
                continue
            if parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parse(target).ids:
                    logger.warning(
                        "%s: broken link %s (no id %r on that page)",
                        html.relative_to(out), link, parts.fragment,
                    )
                    broken += 1
    logger.info("internal link check: %d pages, %d broken links", len(pages), broken)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
