"""The last edits of a page's HTML, in one parsed pass: links, names, marks, anchors.

`edit` takes the page content (a BeautifulSoup tree) and what it needs to know about the
page (`PageInfo`, plain data, so that the result can be cached by it). On a chapter page:

- links written to source files (``page.py``, ``page.md``) lead to the built pages; from a
  translation, those into the API reference lead to the English site (`book.links`);
- ``[title][attention_mechanisms.<module>.<name>]`` cross-references, which nbconvert leaves
  as text, become autorefs' ``<autoref>`` tags (which autorefs resolves, or reports), or
  links to the English reference on a translated page;
- under each class or function that a chapter shows from the package (``data-include``,
  `book.include`), a line links to its full source, with its docstrings, in the reference.

The package's own source is left out of the search index (``data-search-exclude``), where a
chapter shows it (a cell marked ``include=``, with its diff and its whole class) and where
the API reference lists it under each class and function: it is the same code in both
places, the prose and the docstrings around it name every part of it, and the index is
loaded by every page.

On a translated page:

- each paragraph that is behind the English (``<!-- book:behind -->``, `book.compose`) is
  marked, with a note that leads to the English page; a note at the top says how many;
- each heading gets an anchor made from its own words (`anchors`): mkdocs-jupyter's keep
  ASCII only, so a Chinese heading would get an empty one that its contents entry misses;
- the headings' link titles and the titles of the folds (solutions, whole classes) are in
  the page's language.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from bs4 import BeautifulSoup, Comment, NavigableString, SoupStrainer, Tag
from pymdownx.slugs import slugify

from book import links
from book.build import ENGLISH

_SLUG = slugify(case="lower")
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
_BEHIND = "book:behind"


class PageError(ValueError):
    """The page's HTML does not have the shape its edits need."""


@dataclass(frozen=True)
class PageInfo:
    """What the edits need to know about a page: plain data, a cache key."""

    uri: str  # its source, relative to the docs folder: chapter-3/01-why-attention.py
    language: str
    english: str  # the English docs folder, where the API reference's pages are
    notebook: bool
    urls: dict[str, str] = field(default_factory=dict)  # every page's address from this one
    words: dict[str, str] = field(default_factory=dict)  # extra.translation in the config
    titles: tuple[str, ...] = ()  # the contents entries as written, in order

    @property
    def translated(self) -> bool:
        return self.language != ENGLISH


def with_code(content: str, titles: tuple[str, ...]) -> tuple[str, ...]:
    """The contents entries' ``titles``, each heading that holds inline code in its own
    words: the entries that mkdocs-jupyter makes drop the code ("The `x` class" became
    "The class", and so did its anchor)."""
    only = SoupStrainer(_HEADINGS)  # a third of the time of parsing the whole page
    headings = BeautifulSoup(content, "html.parser", parse_only=only).find_all(_HEADINGS, id=True)
    if len(headings) != len(titles):
        return titles  # `_heading_ids` says so
    return tuple(
        _words(heading) if heading.find("code") else title
        for heading, title in zip(headings, titles, strict=True)
    )


def _words(heading: Tag) -> str:
    """A heading's text, without its permalink (nbconvert's or the theme's)."""
    texts = heading.find_all(string=True)
    permalink = ["headerlink", "anchor-link"]
    return "".join(t for t in texts if not t.find_parent("a", class_=permalink)).strip()


def anchors(titles: tuple[str, ...]) -> list[str]:
    """An anchor for each heading, from its title's words; repeated ones numbered."""
    used: set[str] = set()
    result = []
    for title in titles:
        text = BeautifulSoup(title, "html.parser").get_text()
        base = _SLUG(text, "-") or "section"
        anchor, number = base, 0
        while anchor in used:
            number += 1
            anchor = f"{base}_{number}"
        used.add(anchor)
        result.append(anchor)
    return result


def _new(soup: BeautifulSoup, markup: str) -> Tag:
    element = BeautifulSoup(markup, "html.parser").contents[0]
    assert isinstance(element, Tag)
    return element


def _reference(soup: BeautifulSoup, info: PageInfo, identifier: str, inner: str) -> Tag | None:
    """A link to ``identifier`` in the API reference, holding ``inner`` (HTML)."""
    if not info.translated:
        return _new(soup, f'<autoref identifier="{identifier}">{inner}</autoref>')
    url = links.english_reference(Path(info.english), info.uri, identifier)
    return None if url is None else _new(soup, f'<a href="{html.escape(url)}">{inner}</a>')


def _local_links(soup: BeautifulSoup, info: PageInfo) -> list[str]:
    warnings = []
    for anchor in soup.find_all("a", href=links.LOCAL_HREF):
        href, _, fragment = str(anchor["href"]).partition("#")
        target = links.target_of(info.uri, href)
        hash_part = f"#{fragment}" if fragment else ""
        if target in info.urls:
            anchor["href"] = info.urls[target] + hash_part
        elif info.translated and links.in_reference(target):
            anchor["href"] = links.english_url(info.uri, target) + hash_part
        else:
            warnings.append(f"{info.uri} links to {target}, which is not a page of this site")
    return warnings


def _title_start(text: NavigableString, before: str) -> tuple[NavigableString, int, list]:
    """Where the ``[title]`` that ends at ``before`` in ``text`` starts: the text node that
    holds its ``[``, the offset of that ``[``, and the elements in between (``<code>``...)."""
    if "[" in before:
        return text, before.rindex("["), []
    between: list = []
    node = text.previous_sibling
    while node is not None:
        if isinstance(node, NavigableString) and "[" in node:
            return node, node.rindex("["), between[::-1]
        between.append(node)
        node = node.previous_sibling
    raise PageError(f"a cross-reference ending with {text[:60]!r} has no opening '['")


def _link_one(soup: BeautifulSoup, info: PageInfo, text: NavigableString) -> NavigableString | None:
    """Turn the first ``[title][identifier]`` that ends in ``text`` into a link; return the
    text after it (to look for more), or None if it names no page of the reference."""
    match = links.CLOSING.search(text)
    assert match is not None
    before = str(text)[: match.start()]
    opener, at, between = _title_start(text, before)
    link = _reference(soup, info, match[1], "")
    if link is None:
        return None
    inside = str(opener)[at + 1 :] if opener is not text else before[at + 1 :]
    parts = [NavigableString(inside), *(node.extract() for node in between)]
    if opener is not text:
        parts.append(NavigableString(before))
    for part in parts:
        link.append(part)
    rest = NavigableString(str(text)[match.end() :])
    if opener is text:
        text.replace_with(NavigableString(before[:at]), link, rest)
    else:
        opener.replace_with(NavigableString(str(opener)[:at]))
        text.replace_with(link, rest)
    return rest


def _cross_references(soup: BeautifulSoup, info: PageInfo) -> list[str]:
    warnings = []
    for text in soup.find_all(string=links.CLOSING):
        if text.find_parent(["code", "pre"]) is not None:
            continue
        node: NavigableString | None = text
        while node is not None and (match := links.CLOSING.search(node)) is not None:
            node = _link_one(soup, info, node)
            if node is None:
                warnings.append(f"{info.uri} refers to {match[1]}, which has no reference page")
    return warnings


def _sources(soup: BeautifulSoup, info: PageInfo) -> None:
    before, _, after = info.words["source"].partition("{name}")
    for cell in soup.select("div.nb-cell[data-include]"):
        identifier = str(cell["data-include"])
        name = f"<code>{identifier.rpartition('.')[2]}</code>"
        line = _new(soup, f'<p class="nb-source">{html.escape(before)}</p>')
        link = _reference(soup, info, identifier, name)
        line.append(link if link is not None else _new(soup, name))
        line.append(after)
        cell.insert_after(line)


def _behind(soup: BeautifulSoup, info: PageInfo) -> int:
    comments = [
        c for c in soup.find_all(string=lambda s: isinstance(s, Comment)) if c.strip() == _BEHIND
    ]
    english = links.english_url(info.uri, info.uri)
    for comment in comments:
        marked = comment.find_next_sibling()
        if isinstance(marked, Tag):
            marked["class"] = [*marked.get("class", []), "book-behind"]
            note = _new(
                soup,
                '<p class="book-behind-note" data-search-exclude>'
                f'<a href="{english}" hreflang="{ENGLISH}">'
                f"{html.escape(info.words['behind'])}</a></p>",
            )
            marked.insert_before(note)
        comment.extract()
    return len(comments)


def _heading_ids(soup: BeautifulSoup, info: PageInfo) -> None:
    headings = soup.find_all(_HEADINGS, id=True)
    ids = anchors(info.titles)
    if len(headings) != len(ids):
        raise PageError(f"{info.uri}: {len(headings)} headings but {len(ids)} contents entries")
    for heading, anchor in zip(headings, ids, strict=True):
        heading["id"] = anchor
        for link in heading.select("a.headerlink"):
            link["href"] = f"#{anchor}"


def _translated(soup: BeautifulSoup, info: PageInfo, behind: int) -> None:
    _heading_ids(soup, info)
    for link in soup.select('a.headerlink[title="Permanent link"]'):
        link["title"] = info.words["permalink"]
    for summary in soup.select("details.book-solution > summary"):
        summary.string = info.words["solution"]
    for summary in soup.select("details.book-whole-class > summary"):
        summary.string = info.words["whole_class"]
    if behind:
        english = links.english_url(info.uri, info.uri)
        notice = _new(
            soup,
            '<div class="admonition warning book-stale" data-search-exclude>'
            f'<p class="admonition-title">{html.escape(info.words["stale"])}</p>'
            f'<p><a href="{english}" hreflang="{ENGLISH}">'
            f"{html.escape(info.words['english'])}</a></p>"
            "</div>",
        )
        heading = soup.find("h1")
        if heading is not None:
            heading.insert_after(notice)
        else:
            soup.insert(0, notice)


def _unsearched_sources(soup: BeautifulSoup) -> None:
    for listing in soup.select("details.mkdocstrings-source, div.nb-cell[data-include]"):
        listing["data-search-exclude"] = ""


def edit(soup: BeautifulSoup, info: PageInfo) -> list[str]:
    """Edit the page content in place (see the module doc); return what to warn about.

    Raises:
        PageError: If a translated page's headings do not match its contents entries.
    """
    warnings = []
    if info.notebook:
        warnings += _local_links(soup, info)
        warnings += _cross_references(soup, info)
        _sources(soup, info)
    _unsearched_sources(soup)
    behind = _behind(soup, info)
    if info.translated:
        _translated(soup, info, behind)
    return warnings
