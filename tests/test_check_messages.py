"""attention-check's words in four languages: the same keys and placeholders in every
catalogue, links to sections that exist on that language's pages, the locale's language."""

from __future__ import annotations

import re
import string
from pathlib import Path

import polib
import pytest
from checking import check_source, message
from markdown.extensions.toc import slugify as english_slug
from pymdownx.slugs import slugify

from attention_mechanisms.check.messages import (
    LANGUAGES,
    SITE,
    catalogue,
    default_language,
    link,
    render,
)

ROOT = Path(__file__).parents[1]
_SLUG = slugify(case="lower")


def placeholders(text: str) -> set[str]:
    return {f"{name}!{conversion}:{spec}" for _, name, spec, conversion in
            string.Formatter().parse(text) if name is not None}  # fmt: skip


@pytest.mark.parametrize("language", LANGUAGES[1:])
def test_every_catalogue_has_the_english_keys_and_placeholders(language):
    english, other = catalogue("en"), catalogue(language)
    assert other.keys() == english.keys()
    for table in english:
        assert other[table].keys() == english[table].keys(), table
        for key, text in english[table].items():
            assert placeholders(other[table][key]) == placeholders(text), (table, key)
    assert [other["words"][w] for w in ("pass", "fail", "skip")] == ["pass", "FAIL", "skip"]


def anchors(language: str, page: str) -> set[str]:
    """The anchors of a page's headings (``"pitfalls"`` in chapter 3, or ``"llms/..."``), as
    the site makes them in ``language``."""
    page = page if "/" in page else f"chapter-3/{page}"
    source = (ROOT / "docs" / "en" / f"{page}.py").read_text(encoding="utf-8")
    headings = re.findall(r"^# #+ (.+)$", source, re.M)
    if language != "en":  # a translated heading is an entry of the page's catalog
        po = polib.pofile(str(ROOT / "docs" / language / f"{page}.po"))
        translated = {e.msgid: e.msgstr for e in po if e.msgid.startswith("#")}
        headings = [translated[f"{level} {heading}"] for level, heading in
                    re.findall(r"^# (#+) (.+)$", source, re.M)]  # fmt: skip
        headings = [heading.lstrip("#").strip() for heading in headings]
    texts = [re.sub(r"[`*]", "", heading).strip() for heading in headings]
    if language == "en":
        return {english_slug(text, "-") for text in texts}
    return {_SLUG(text, "-") for text in texts}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_link_leads_to_a_section_of_that_language(language):
    for topic, target in catalogue(language)["links"].items():
        page, _, anchor = target.partition("#")
        assert anchor in anchors(language, page), (language, topic, target)
        path = page if "/" in page else f"chapter-3/{page}"
        assert link(topic, language) == f"{SITE}{language}/{path}/#{anchor}"


def test_the_site_is_the_one_mkdocs_builds():
    site_url = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert f"{SITE}en/" == site_url.group(1)


@pytest.mark.parametrize(
    ("environ", "language"),
    [
        ({"LANG": "vi_VN.UTF-8"}, "vi"),
        ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LANGUAGE": "id:en", "LANG": "vi_VN.UTF-8"}, "id"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_the_default_language_is_the_locales(environ, language):
    assert default_language(environ) == language


def test_an_unknown_language_is_refused_by_name():
    expected = f"language must be one of {', '.join(LANGUAGES)}; got 'fr'"
    with pytest.raises(ValueError, match=expected):
        catalogue("fr")


def test_a_message_renders_its_message_parameters_first():
    nested = {"key": "at_probe", "probe": {"key": "probe_batch_1", "batch": 1},
              "cause": {"key": "error", "error": "E"}}  # fmt: skip
    assert render(nested, "en") == "works with the book's shapes; with a batch of 1: E"


SDPA_MISTAKE = (ROOT / "tests/fixtures/check/mistakes/sdpa_hide_mask_as_attn_mask.py").read_text(
    encoding="utf-8"
)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_report_speaks_the_language_asked_for(language):
    report = check_source(SDPA_MISTAKE, language)
    (component,) = report["components"]
    causal = next(k for k in component["checks"] if k["check"] == "causal")
    assert causal["status"] == "fail" and causal["check"] == "causal"  # JSON stays English
    assert f"{SITE}{language}/chapter-3/pitfalls/#" in causal["message"]
    assert "scaled_dot_product_attention" in causal["message"]  # code stays code
    english = check_source(SDPA_MISTAKE, "en")["components"][0]["checks"]
    others = [k["message"] for k in component["checks"]]
    assert (others == [k["message"] for k in english]) == (language == "en")


# The causes added for what learners typed after the first checker: the failing check, and
# code that the message must keep as code in every language.
NEW_CAUSES = {
    "causal_global_mask.py": ("CausalAttention", "mask_buffer", "mask_simple"),
    "causal_mask_hides_past.py": ("CausalAttention", "causal", "triu(..., diagonal=1)"),
    "mha_head_dim_from_d_in.py": ("MultiHeadAttention", "runs", "d_out // num_heads = 2"),
    "causal_mask_after_softmax.py": ("CausalAttention", "weights_sum", "-inf"),
    "causal_scale_by_num_tokens.py": ("CausalAttention", "scale", "keys.shape[-1] ** 0.5"),
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("fixture", NEW_CAUSES)
def test_the_new_causes_speak_every_language(fixture, language):
    source = (ROOT / "tests/fixtures/check/mistakes" / fixture).read_text(encoding="utf-8")
    component, check, code = NEW_CAUSES[fixture]
    text = message(check_source(source, language), component, check)
    english = message(check_source(source, "en"), component, check)
    assert code in text, text
    assert f"{SITE}{language}/chapter-3/" in text, text
    assert (text == english) == (language == "en")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_memory_limit_speaks_every_language(language):
    for key in ("hint_memory", "hint_memory_stopped"):
        text = render({"key": key, "limit": "1 GiB"}, language)
        assert "1 GiB" in text
        assert (text == render({"key": key, "limit": "1 GiB"}, "en")) == (language == "en")
