"""What the browser tests share: where the built site is and which pages it has."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_site_url = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(), re.M).group(1)
PREFIX = urlsplit(_site_url).path  # e.g. "/attention-mechanisms/"

# TeX that was not typeset: \commands, \( \) \[ \] and $...$ delimiters.
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\\[()\[\]]|\$\$|\$[^$\s][^$]*\$")

# The most a page may transfer on a cold load: every response body, uncompressed, as a
# static server sends it.
PAGE_LIMIT = 1024 * 1024

# Filled by test_pages.py, printed at the end of the run by conftest.py:
# page -> (bytes of every response body, number of requests, requests to other hosts).
TRANSFER_SIZES: dict[str, tuple[int, int, int]] = {}
# page -> (code blocks scrolling sideways at 1280 px, narrowest notebook code block at
# 390 px as a fraction of the screen's width, or None on a page without notebook code).
LAYOUT: dict[str, tuple[int, float | None]] = {}


def site_pages() -> list[str]:
    """Every page of the built site, as a path relative to the site root ("" is home)."""
    pages = sorted(p.parent.relative_to(SITE).as_posix() for p in SITE.rglob("index.html"))
    return ["" if page == "." else f"{page}/" for page in pages]


def notebook_pages() -> list[str]:
    """The pages rendered from chapter notebooks."""
    return [
        page
        for page in site_pages()
        if '<div class="notebook">' in (SITE / page / "index.html").read_text()
    ]
