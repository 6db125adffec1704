"""Every page of the built site, as a reader's browser loads it."""

from __future__ import annotations

import contextlib
import json
import re
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
from browsing import LANGUAGES, PAGE_LIMIT, RAW_TEX, notebook_pages, site_pages

# Everything a reader can see or hear outside code: the title, the whole body (navigation,
# table of contents, headings, hidden menus included) and the labels of its elements.
VISIBLE_TEXT = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll("pre, code, script, style, textarea").forEach((e) => e.remove());
  const labels = Array.from(document.querySelectorAll("[aria-label], [title], [alt]"))
    .map((e) => ["aria-label", "title", "alt"].map((a) => e.getAttribute(a) || "").join(" "));
  return [document.title, body.textContent, ...labels].join("\\n");
}"""

# Every code block (and output) of the article, all solutions unfolded: does it scroll
# sideways? (A block that fits has no more content than width.)
SIDEWAYS = """() => {
  document.querySelectorAll("article details").forEach((d) => { d.open = true; });
  return Array.from(document.querySelectorAll("article pre"))
    .map((pre) => pre.querySelector(":scope > code") || pre)
    .filter((box) => box.clientWidth > 0 && box.scrollWidth > box.clientWidth)
    .map((box) => box.textContent.trim().split("\\n")[0].slice(0, 60));
}"""

# The code blocks with a character under their copy button, and how many buttons were seen.
COVERED = """() => {
  const covered = [];
  let buttons = 0;
  for (const button of document.querySelectorAll("article button[data-md-type='copy']")) {
    const b = button.getBoundingClientRect();
    const code = button.closest("pre").querySelector(":scope > code");
    if (b.width === 0 || !code) continue;
    buttons += 1;
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    while (walker.nextNode()) {
      // A text whose box misses the button has no character under it: skip it whole.
      range.selectNodeContents(walker.currentNode);
      const t = range.getBoundingClientRect();
      if (!(t.right > b.left && t.left < b.right && t.bottom > b.top && t.top < b.bottom)) continue;
      const text = walker.currentNode.textContent;
      for (let i = 0; i < text.length; i++) {
        if (!text[i].trim()) continue;
        range.setStart(walker.currentNode, i);
        range.setEnd(walker.currentNode, i + 1);
        const r = range.getBoundingClientRect();
        if (r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom) {
          covered.push(code.textContent.trim().split("\\n")[0].slice(0, 40));
          break;
        }
      }
    }
  }
  return { buttons, covered: [...new Set(covered)] };
}"""

# The narrowest notebook code block, as a fraction of the window's width.
NOTEBOOK_CODE_WIDTH = """() => {
  const widths = Array.from(document.querySelectorAll("article .nb-cell pre"))
    .map((pre) => pre.getBoundingClientRect().width)
    .filter((width) => width > 0);
  return widths.length ? Math.min(...widths) / window.innerWidth : null;
}"""

IMAGES = """() => Array.from(document.images).map((image) => ({
  src: image.currentSrc.slice(0, 80),
  alt: image.getAttribute("alt"),
  loaded: image.complete && image.naturalWidth > 0,
}))"""


@pytest.fixture(scope="module")
def tab(browser):
    """The one tab in which this process visits every page, each as a reader's first visit.

    A new tab for each page took twice the CPU time of the visit itself; the cache is
    emptied before each page and turned off, so each load fetches every file whole.
    """
    context = browser.new_context()
    page = context.new_page()
    session = context.new_cdp_session(page)  # its settings last as long as it does
    session.send("Network.setCacheDisabled", {"cacheDisabled": True})
    yield page, session
    session.detach()
    context.close()


@contextlib.contextmanager
def recording(page):
    """What happens on ``page`` meanwhile: errors, failed requests, other hosts, responses."""
    record: dict[str, list] = {"console": [], "failed": [], "foreign": [], "responses": []}
    pending: set = set()  # the requests in flight

    def on_request(request) -> None:
        pending.add(request)
        host = urlsplit(request.url).hostname
        if urlsplit(request.url).scheme not in ("data", "blob") and host != "127.0.0.1":
            record["foreign"].append(request.url)

    handlers = {
        "console": lambda m: m.type == "error" and record["console"].append(m.text),
        "pageerror": lambda error: record["console"].append(str(error)),
        "request": on_request,
        "requestfinished": lambda r: pending.discard(r),
        "requestfailed": lambda r: (
            pending.discard(r) or record["failed"].append(f"{r.url} ({r.failure})")
        ),
        "response": lambda response: record["responses"].append(response),
    }
    for event, handler in handlers.items():
        page.on(event, handler)
    try:
        yield record
        # What the page asks for after its load event (its icon, the search worker) counts
        # too: wait until nothing has been in flight for 0.1 s (Playwright's "networkidle"
        # waits 0.5 s, as long as the rest of the visit).
        quiet = 0
        for _ in range(1200):  # 30 s at most
            page.wait_for_timeout(25)
            quiet = 0 if pending else quiet + 1
            if quiet == 4:
                break
        else:
            raise AssertionError(f"requests still in flight: {[r.url for r in pending]}")
    finally:
        for event, handler in handlers.items():
            page.remove_listener(event, handler)


@pytest.mark.parametrize("path", site_pages(), ids=lambda p: p or "home")
def test_page(tab, base_url, screenshots, request, record_property, path):
    page, session = tab
    page.set_viewport_size({"width": 1280, "height": 900})
    session.send("Network.clearBrowserCache")  # nothing left to revalidate (a 304)
    with recording(page) as record:
        response = page.goto(base_url + path)
    assert response.status == 200
    size = sum(len(r.body()) for r in record["responses"] if r.status == 200)
    record_property("transfer", (path, size, len(record["responses"]), len(record["foreign"])))
    whole = request.config.getoption("screenshots")  # a page saved whole takes seconds
    assert record["console"] == [], "console errors"
    assert record["foreign"] == [], "requests to other hosts"
    assert record["failed"] == [], "failed requests"
    bad = [f"{r.status} {r.url}" for r in record["responses"] if r.status >= 400]
    assert bad == [], "error responses"
    cached = [r.url for r in record["responses"] if r.status == 304 or r.from_service_worker]
    assert cached == [], "a first visit gets every file whole, none from a cache"
    assert size <= PAGE_LIMIT, f"a cold load transfers {size:,} bytes"
    math_code = [r.url for r in record["responses"] if re.search("mathjax|katex", r.url, re.I)]
    assert math_code == [], "math is typeset at build time: no page loads math code"

    # Accessibility basics.
    assert page.evaluate("document.documentElement.lang") == path.split("/")[0]
    assert page.locator("h1").count() == 1, "one h1 per page"
    images = page.evaluate(IMAGES)
    assert [i for i in images if not (i["alt"] or "").strip()] == [], "images without alt text"
    assert [i for i in images if not i["loaded"]] == [], "images that did not load"

    # Every formula typeset: no TeX left anywhere a reader looks.
    leftovers = RAW_TEX.findall(page.evaluate(VISIBLE_TEXT))
    assert leftovers == [], "raw TeX left on the page"

    # Code fits the column, and no copy button covers code.
    sideways = page.evaluate(SIDEWAYS)
    covered = page.evaluate(COVERED)
    name = path.strip("/").replace("/", "__") or "home"
    if whole:
        page.screenshot(path=screenshots / f"{name}.desktop.png", full_page=True)

    # On a phone: notebook code keeps most of the width, and the page never scrolls sideways.
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate(SIDEWAYS)  # unfolds the solutions
    phone_width = page.evaluate(NOTEBOOK_CODE_WIDTH)
    page_width = page.evaluate("document.documentElement.scrollWidth")
    covered_on_phone = page.evaluate(COVERED)
    if whole:
        page.screenshot(path=screenshots / f"{name}.phone.png", full_page=True)
    record_property("layout", (path, len(sideways), phone_width))

    assert sideways == [], "code blocks that scroll sideways at 1280 px"
    assert covered["covered"] == [], "code under the copy button at 1280 px"
    assert covered_on_phone["covered"] == [], "code under the copy button at 390 px"
    if path in notebook_pages():
        assert covered["buttons"] > 0 and covered_on_phone["buttons"] > 0
        assert_the_download_is_the_executed_notebook(page)
    assert page_width <= 390, "the page scrolls sideways on a 390 px phone"
    if phone_width is not None:
        assert phone_width >= 0.8, "notebook code narrower than 80% of a 390 px phone"


def assert_the_download_is_the_executed_notebook(page) -> None:
    """A chapter's download link returns its notebook, outputs and all, as plain Jupyter."""
    link = page.locator("a[download]")
    assert link.count() == 1
    response = page.context.request.get(urljoin(page.url, link.get_attribute("href")))
    assert response.status == 200
    nb = nbformat.reads(response.text(), as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, "a chapter notebook has code"
    assert any(cell.outputs for cell in code), "the download carries the outputs"
    assert json.loads(response.text())["nbformat"] == 4
    # A plain notebook: the page's presentation (folded solutions) is not in it.
    assert [cell.cell_type for cell in nb.cells if cell.cell_type == "raw"] == []
    assert not any("<details" in cell.source for cell in nb.cells)


def test_the_page_checks_find_what_they_look_for(context):
    """Each check above, on a page made to fail it: none can pass by seeing nothing."""
    page = context.new_page()
    page.set_content(
        r"""<title>Attention</title><nav><a title="x">Second way: $-\infty$ first</a></nav>
        <article><pre style="position: relative; width: 300px"><button data-md-type="copy"
          style="position: absolute; top: 0; right: 0; width: 40px; height: 40px"></button
        ><code style="display: block; overflow: auto">a_line_long_enough_to_run_under_the_button
        </code></pre><div class="nb-cell"><pre style="width: 100px"><code>x</code></pre></div>
        </article>"""
    )
    assert RAW_TEX.findall(page.evaluate(VISIBLE_TEXT)) == ["$-\\infty$"]  # in the navigation
    assert page.evaluate(SIDEWAYS) == ["a_line_long_enough_to_run_under_the_button"]
    assert page.evaluate(COVERED) == {
        "buttons": 1,
        "covered": ["a_line_long_enough_to_run_under_the_butt"],  # its first 40 characters
    }
    page.set_viewport_size({"width": 1000, "height": 800})
    assert page.evaluate(NOTEBOOK_CODE_WIDTH) == pytest.approx(0.1)


# The classes the chapters show from the package: 3.4.2, 3.5.3, 3.6.1 and 3.6.2.
CLASS_CELLS = {
    "chapter-3/03-trainable-self-attention/": ["SelfAttention_v1", "SelfAttention_v2"],
    "chapter-3/04-causal-attention/": ["CausalAttention"],
    "chapter-3/05-multi-head-attention/": ["MultiHeadAttentionWrapper", "MultiHeadAttention"],
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("chapter", sorted(CLASS_CELLS))
def test_a_class_cell_reads_like_the_book_and_links_to_its_full_source(
    context, base_url, screenshots, language, chapter
):
    page = context.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{base_url}{language}/{chapter}")
    for name in CLASS_CELLS[chapter]:
        cell = page.locator(f'.nb-cell[data-include$=".{name}"]')
        assert cell.count() == 1, name
        code = cell.locator("pre code").inner_text()
        assert code.startswith(f"class {name}(nn.Module):\n    def __init__(self, d_in, d_out")
        for machinery in ('"""', "Args:", "noqa", "-> None", ": Tensor", "$$"):
            assert machinery not in code, (name, machinery)
        # The line under it leads to the whole class, docstrings and all, in the reference.
        source = page.locator(f'.nb-cell[data-include$=".{name}"] + p.nb-source a')
        assert source.inner_text() == name
        reference = context.new_page()
        reference.goto(urljoin(page.url, source.get_attribute("href")))
        anchor = urlsplit(reference.url).fragment
        assert anchor.endswith(f".{name}") and reference.locator(f'[id="{anchor}"]').count() == 1
        assert "Example:" in reference.content() or "Args" in reference.content()
        reference.close()
        # The cell and the line under it, as a reader sees them at 1280 px.
        top, bottom = page.evaluate(
            """([cell, line]) => [cell.getBoundingClientRect().top + scrollY - 8,
                                 line.getBoundingClientRect().bottom + scrollY + 8]""",
            [cell.element_handle(), source.element_handle()],
        )
        width = page.evaluate("document.documentElement.clientWidth")
        page.screenshot(
            path=screenshots / f"class-{language}-{name}.png",
            full_page=True,
            clip={"x": 0, "y": top, "width": width, "height": bottom - top},
        )


# The classes of the pages on today's LLMs, each shown as its changes from MultiHeadAttention.
CHANGES_CELLS = {
    "llms/grouped-query-attention/": "GroupedQueryAttention",
    "llms/sliding-window-attention/": "MultiHeadAttentionWithSWA",
    "llms/latent-attention/": "MultiHeadLatentAttention",
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("chapter", sorted(CHANGES_CELLS))
def test_a_class_shown_as_its_changes_then_unfolds_whole(
    context, base_url, screenshots, language, chapter
):
    name = CHANGES_CELLS[chapter]
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base_url}{language}/{chapter}")
    cell = page.locator(f'.nb-cell[data-include$=".{name}"]')
    assert cell.count() == 1
    diff = cell.locator(".book-changes pre code")
    lines = diff.inner_text().splitlines()
    assert lines[:2] == ["--- MultiHeadAttention", f"+++ {name}"]
    assert (
        f"+class {name}(nn.Module):" in lines and "-class MultiHeadAttention(nn.Module):" in lines
    )
    assert cell.locator(".book-changes .gd").count() > 0 < cell.locator(".book-changes .gi").count()
    # The whole class is folded under the diff, its title in the page's language.
    fold = cell.locator("details.book-whole-class")
    title = fold.locator("summary").inner_text().strip()
    assert (title == "The whole class") == (language == "en"), title
    whole = fold.locator("pre code")
    assert not whole.is_visible()
    fold.locator("summary").click()
    assert whole.is_visible()
    # The class line, then its constructor from `self, d_in` on (on one line where it fits in
    # 100 characters, book.include, else one parameter a line).
    opening = rf"class {name}\(nn\.Module\):\n    def __init__\(\s*self,\s*d_in,"
    assert re.match(opening, whole.inner_text()), whole.inner_text()[:200]
    assert page.locator(f'.nb-cell[data-include$=".{name}"] + p.nb-source a').inner_text() == name
    cell.screenshot(path=screenshots / f"changes-{language}-{name}.phone.png")
