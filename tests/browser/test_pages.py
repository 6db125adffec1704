"""Every page of the built site, as a reader's browser loads it."""

from __future__ import annotations

import json
import re
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
from browsing import TRANSFER_SIZES, notebook_pages, site_pages

# TeX that MathJax should have replaced: \commands, \( \) \[ \] and $...$ delimiters.
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\\[()\[\]]|\$\$|\$[^$\s][^$]*\$")

# The page's text without code, outputs and typeset math, where raw TeX would show.
PROSE_TEXT = """() => {
  const article = document.querySelector("article").cloneNode(true);
  article.querySelectorAll("pre, code, mjx-container, script, style, .jp-OutputArea")
    .forEach((element) => element.remove());
  return article.textContent;
}"""

IMAGES = """() => Array.from(document.images).map((image) => ({
  src: image.currentSrc.slice(0, 80),
  alt: image.getAttribute("alt"),
  loaded: image.complete && image.naturalWidth > 0,
}))"""


def load(context, url: str):
    """Open ``url`` and record what happened on the way."""
    page = context.new_page()
    record = {"console": [], "failed": [], "foreign": [], "responses": []}
    page.on("console", lambda m: m.type == "error" and record["console"].append(m.text))
    page.on("pageerror", lambda error: record["console"].append(str(error)))
    page.on("requestfailed", lambda r: record["failed"].append(f"{r.url} ({r.failure})"))

    def on_request(request) -> None:
        host = urlsplit(request.url).hostname
        if urlsplit(request.url).scheme not in ("data", "blob") and host != "127.0.0.1":
            record["foreign"].append(request.url)

    page.on("request", on_request)
    page.on("response", lambda response: record["responses"].append(response))
    response = page.goto(url, wait_until="networkidle")
    # Wait until MathJax has typeset the page, if the page loads it.
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    return page, response, record


@pytest.mark.parametrize("path", site_pages(), ids=lambda p: p or "home")
def test_page(context, base_url, screenshots, path):
    page, response, record = load(context, base_url + path)
    assert response.status == 200
    TRANSFER_SIZES[path] = (0, len(record["responses"]), len(record["foreign"]))
    assert record["console"] == [], "console errors"
    assert record["foreign"] == [], "requests to other hosts"
    assert record["failed"] == [], "failed requests"
    bad = [f"{r.status} {r.url}" for r in record["responses"] if r.status >= 400]
    assert bad == [], "error responses"

    # Accessibility basics.
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.locator("h1").count() == 1, "one h1 per page"
    images = page.evaluate(IMAGES)
    assert [i for i in images if not (i["alt"] or "").strip()] == [], "images without alt text"
    assert [i for i in images if not i["loaded"]] == [], "images that did not load"

    # Every formula typeset: no TeX left in the text a reader sees.
    leftovers = RAW_TEX.findall(page.evaluate(PROSE_TEXT))
    assert leftovers == [], "raw TeX left on the page"

    TRANSFER_SIZES[path] = (
        sum(len(r.body()) for r in record["responses"] if r.status == 200),
        len(record["responses"]),
        len(record["foreign"]),
    )
    name = path.strip("/").replace("/", "__") or "home"
    page.screenshot(path=screenshots / f"{name}.desktop.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=screenshots / f"{name}.phone.png", full_page=True)


@pytest.mark.parametrize("path", notebook_pages())
def test_download_link_returns_the_executed_notebook(context, base_url, path):
    page = context.new_page()
    page.goto(base_url + path)
    link = page.locator("a[download]")
    assert link.count() == 1
    href = urljoin(page.url, link.get_attribute("href"))
    response = context.request.get(href)
    assert response.status == 200
    nb = nbformat.reads(response.text(), as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, "a chapter notebook has code"
    assert any(cell.outputs for cell in code), "the download carries the outputs"
    assert json.loads(response.text())["nbformat"] == 4
