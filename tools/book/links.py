"""Links between the book's pages, across languages: where a link written in a source leads.

Pages link to each other by their source files (``02-simple-self-attention.py``,
``../reference/index.md``), as Markdown pages do in MkDocs, and to the API reference by name
with the autorefs syntax, ``[title][attention_mechanisms.multihead.MultiHeadAttention]``
(the title, then identifier).
Every language sits in its own folder beside English (``site/vi/``, ``site/en/``), and the API
reference exists in English only: from a translated page, a link into ``reference/`` leads to
the English site.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from book.build import ENGLISH, PACKAGE, REFERENCE

# [title][identifier]: a cross-reference to the API reference.
CROSS_REFERENCE = re.compile(rf"\[([^\[\]]+)\]\[({PACKAGE}(?:\.\w+)+)\]")
# The end of one, after its title: ][identifier]. The title may hold markup (<code>).
CLOSING = re.compile(rf"\]\[({PACKAGE}(?:\.\w+)+)\]")
# A link written to a source file, as an href: page.py, ../reference/index.md#section.
LOCAL_HREF = re.compile(r"^(?![a-z]+:|#|/)[^#]+\.(?:py|md)(?:#.*)?$")
# A relative Markdown link, [text](target#anchor).
MARKDOWN_LINK = re.compile(r"\]\((?![a-z]+:|#|/)([^)\s#]+)(#[^)\s]*)?\)")


def url_of(src_uri: str) -> str:
    """The address of the page built from ``src_uri``, relative to its site's root."""
    name = posixpath.splitext(src_uri)[0]
    return "" if name == "index" else name.removesuffix("/index") + "/"


def target_of(page: str, href: str) -> str:
    """A link's target relative to the docs folder, from the page (``src_uri``) it is on."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), href))


def in_reference(target: str) -> bool:
    return target.split("/")[0] == REFERENCE


def english_url(page: str, target: str) -> str:
    """The address, from ``page`` of a translation, of the English page built from ``target``."""
    return f"{'../' * url_of(page).count('/')}../{ENGLISH}/{url_of(target)}"


def reference_target(english: Path, identifier: str) -> str | None:
    """The page of the reference in ``english`` (``docs/en``) that documents
    ``attention_mechanisms.<module>.<name>``, or None."""
    target = f"{REFERENCE}/{identifier.split('.')[1]}.md"
    return target if (english / target).is_file() else None


def english_reference(english: Path, page: str, identifier: str) -> str | None:
    """The English reference's address of ``identifier``, from ``page`` of a translation."""
    target = reference_target(english, identifier)
    return None if target is None else f"{english_url(page, target)}#{identifier}"


def translated_markdown(english: Path, markdown: str, page: str) -> tuple[str, list[str]]:
    """A translated Markdown page's links into the reference, pointed at the English site.

    Returns:
        The Markdown, and a message for each cross-reference to a name with no reference page.
    """
    unknown: list[str] = []

    def link(match: re.Match) -> str:
        target = target_of(page, match[1])
        if not in_reference(target):
            return match[0]
        return f"]({english_url(page, target)}{match[2] or ''})"

    def reference(match: re.Match) -> str:
        url = english_reference(english, page, match[2])
        if url is None:
            unknown.append(f"{page} refers to {match[2]}, which the API reference has no page for")
            return match[0]
        return f"[{match[1]}]({url})"

    return CROSS_REFERENCE.sub(reference, MARKDOWN_LINK.sub(link, markdown)), unknown
