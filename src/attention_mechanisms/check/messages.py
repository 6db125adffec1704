"""The checker's words, in the learner's language.

Checks never write sentences: they return a message, ``{"key": ..., **params}``, and the
report renders it with the catalogue of the language asked for, one TOML file per language
in ``messages/`` (``en.toml``, ``vi.toml``, ``zh.toml``, ``id.toml``), with the same keys and
the same ``{placeholders}`` in each (a test holds them so). A parameter may itself be a
message. A topic (a role, a check, a pitfall) links to the site's section on it, in the
same language: its page and anchor are in the catalogue's ``[links]`` table, since a
translated page's anchors are made from its own headings.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources

LANGUAGES = ("en", "vi", "zh", "id")
SITE = "https://attention-mechanisms.github.io/attention-mechanisms/"
Message = dict  # {"key": str, **params}


def msg(key: str, **params: object) -> Message:
    return {"key": key, **params}


@cache
def catalogue(language: str) -> dict[str, dict[str, str]]:
    """The language's tables: ``messages``, ``words`` and ``links``."""
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}; got {language!r}")
    text = resources.files(__package__).joinpath("messages", f"{language}.toml").read_text("utf-8")
    return tomllib.loads(text)


def word(word_name: str, language: str, **params: object) -> str:
    """One of the report's own words (``pass``, ``FAIL``, a table's heading...)."""
    return catalogue(language)["words"][word_name].format(**params)


def render(message: Message | str, language: str) -> str:
    """The message in ``language``, its message parameters rendered first."""
    if isinstance(message, str):
        return message
    params = {
        name: render(value, language) if isinstance(value, dict) else value
        for name, value in message.items()
        if name != "key"
    }
    return catalogue(language)["messages"][message["key"]].format(**params)


def link(topic: str, language: str) -> str:
    """The address of the site's section on ``topic``, in ``language``: a page of chapter 3
    (``"pitfalls#..."``), or of another part (``"llms/grouped-query-attention#..."``)."""
    page, _, anchor = catalogue(language)["links"][topic].partition("#")
    path = page if "/" in page else f"chapter-3/{page}"
    return f"{SITE}{language}/{path}/" + (f"#{anchor}" if anchor else "")


def default_language(environ: Mapping[str, str] = os.environ) -> str:
    """The language of the locale (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``, as
    gettext reads them) when it is one of `LANGUAGES`; English otherwise."""
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:
            code = value.split(":")[0].split("_")[0].split(".")[0].lower()
            return code if code in LANGUAGES else "en"
    return "en"
