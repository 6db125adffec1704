"""book.publish.externalize: the built pages' inline figures become files beside them."""

from __future__ import annotations

import base64
import hashlib

from book import publish

RED = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)
BLUE = RED.replace(b"\xf8\xcf\xc0", b"\xf8\xcf\xc1")  # another image, another name


def inline(png: bytes, alt: str) -> str:
    return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def test_each_inline_figure_moves_to_a_file_named_by_its_content(tmp_path):
    page = tmp_path / "en" / "chapter" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f"<p>{inline(RED, 'a')}</p>{inline(BLUE, 'b')}{inline(RED, 'c')}")
    missing = tmp_path / "en" / "404.html"
    missing.write_text(inline(RED, "kept"))

    assert publish.externalize(tmp_path) == 3
    red, blue = (f"figure-{hashlib.sha256(png).hexdigest()[:16]}.png" for png in (RED, BLUE))
    assert page.read_text() == (
        f'<p><img alt="a" src="{red}"></p><img alt="b" src="{blue}"><img alt="c" src="{red}">'
    )
    assert (page.parent / red).read_bytes() == RED and (page.parent / blue).read_bytes() == BLUE
    assert sorted(p.name for p in page.parent.iterdir()) == sorted(["index.html", red, blue])
    # A 404 page is served at any address, where a relative one would not resolve.
    assert missing.read_text() == inline(RED, "kept")
    # A second pass finds nothing left to move.
    assert publish.externalize(tmp_path) == 0
