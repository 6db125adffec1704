"""Figures as files: each PNG that a built page carries inline moves to a file beside it.

A notebook's figures reach the page as ``<img src="data:image/png;base64,...">``: a third
larger than the image, and fetched again with every visit to the page. After the build,
`externalize` writes each one to ``figure-<hash>.png`` in the page's folder and points the
``<img>`` at it, so the page is lighter and the browser caches the image. The name is the
image's hash: an unchanged figure keeps its address from one build to the next.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path

INLINE = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


def externalize(site: Path) -> int:
    """Move every inline PNG of the pages under ``site`` to a file beside its page.

    Only pages at a folder's ``index.html``: a 404 page is served at any address, where a
    relative image address would not resolve, so its images stay inline.

    Returns:
        How many images moved.
    """
    moved = 0
    for page in site.rglob("index.html"):
        text = page.read_text(encoding="utf-8")
        edited, count = INLINE.subn(functools.partial(_to_file, folder=page.parent), text)
        if count:
            page.write_text(edited, encoding="utf-8")
            moved += count
    return moved


def _to_file(match: re.Match[str], folder: Path) -> str:
    image = base64.b64decode(match[1])
    name = f"figure-{hashlib.sha256(image).hexdigest()[:16]}.png"
    (folder / name).write_bytes(image)
    return f'src="{name}"'
