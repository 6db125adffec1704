"""No broken internal link or anchor anywhere in the built site, nor in attention-check's
messages (no browser needed)."""

from __future__ import annotations

import posixpath
import tomllib
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

import pytest
from browsing import LANGUAGES, ROOT, SITE

MESSAGES = ROOT / "src" / "attention_mechanisms" / "check" / "messages"


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.headings: set[str] = set()  # the ids of h1 to h6
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(values[key])
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and values.get("id"):
            self.headings.add(values["id"])
        if tag == "a" and values.get("href"):
            self.links.append(values["href"])
        if tag in ("img", "script") and values.get("src"):
            self.links.append(values["src"])
        if tag == "link" and values.get("href") and values.get("rel") != "canonical":
            self.links.append(values["href"])


def parse(path):
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


def test_every_internal_link_and_anchor_resolves():
    if not (SITE / "index.html").exists():
        pytest.fail("site/ is not built: run `nox -s docs` first", pytrace=False)
    pages = {p.relative_to(SITE).as_posix(): parse(p) for p in SITE.rglob("*.html")}
    broken = []
    checked = 0
    for source, page in pages.items():
        if source.endswith("404.html"):  # links absolute to the site_url path; served anywhere
            continue
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:")):
                continue
            if parts.path:
                target = posixpath.normpath(
                    posixpath.join(posixpath.dirname(source), unquote(parts.path))
                )
                if link.endswith("/") or (SITE / target).is_dir():
                    target = posixpath.join(target, "index.html")
            else:
                target = source
            checked += 1
            if not (SITE / target).is_file():
                broken.append(f"{source}: {link} (no file {target})")
            elif (
                parts.fragment
                and target.endswith(".html")
                and unquote(parts.fragment) not in pages[target].ids
            ):
                broken.append(f"{source}: {link} (no anchor #{parts.fragment} in {target})")
    assert checked > 100
    assert broken == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_checker_link_lands_on_a_heading_of_that_languages_page(language):
    """attention-check's "(see ...)" links, as the built page writes its headings' anchors
    (a heading with code in it too)."""
    if not (SITE / "index.html").exists():
        pytest.fail("site/ is not built: run `nox -s docs` first", pytrace=False)
    catalogue = tomllib.loads((MESSAGES / f"{language}.toml").read_text(encoding="utf-8"))
    missing = []
    for topic, target in catalogue["links"].items():
        page, _, anchor = target.partition("#")
        path = page if "/" in page else f"chapter-3/{page}"  # a page of chapter 3, or "llms/..."
        headings = parse(SITE / language / path / "index.html").headings
        if anchor not in headings:
            missing.append(f"{topic}: {target}")
    assert catalogue["links"] and missing == []
