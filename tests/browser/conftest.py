"""Fixtures for testing the built site in a real browser (Debian's Chromium via Playwright).

The site in site/ (every language, site/<lang>/) is served on 127.0.0.1 under the path
that holds English's site_url (its .../en/), as GitHub Pages serves a project site, with the
root's 404 page for unknown URLs. Build it first: nox -s docs.
"""

from __future__ import annotations

import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from browsing import CHROMIUM, CHROMIUM_ARGS, PAGE_LIMIT, PREFIX, SCREENSHOTS, SITE

# Filled from the reports of test_pages.py's tests (their ``record_property``, which reaches
# this process from each worker under pytest-xdist), printed at the end of the run:
# page -> (bytes of every response body, number of requests, requests to other hosts).
TRANSFER_SIZES: dict[str, tuple[int, int, int]] = {}
# page -> (code blocks scrolling sideways at 1280 px, narrowest notebook code block at
# 390 px as a fraction of the screen's width, or None on a page without notebook code).
LAYOUT: dict[str, tuple[int, float | None]] = {}


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--screenshots",
        action="store_true",
        help="also save every page whole, at 1280 px and at 390 px, in build/screenshots/ "
        "(about 3 s a page); the smaller screenshots are saved on every run",
    )


def pytest_sessionstart(session) -> None:
    """Empty build/screenshots/ once, in the process that runs or hands out the tests."""
    if not hasattr(session.config, "workerinput"):
        shutil.rmtree(SCREENSHOTS, ignore_errors=True)
        SCREENSHOTS.mkdir(parents=True)


def pytest_runtest_logreport(report) -> None:
    for name, value in report.user_properties:
        if name == "transfer":
            page, *numbers = value
            TRANSFER_SIZES[page] = tuple(numbers)
        elif name == "layout":
            page, sideways, width = value
            LAYOUT[page] = (sideways, width)


class SiteHandler(SimpleHTTPRequestHandler):
    """Serve site/ under PREFIX; anything else, or anything missing, gets the 404 page."""

    def do_GET(self) -> None:
        if not self.path.startswith(PREFIX):
            self.send_error(404)
            return
        self.path = "/" + self.path[len(PREFIX) :]
        super().do_GET()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None):
        if code != 404:
            super().send_error(code, message, explain)
            return
        body = (SITE / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # keep the test output readable
        pass


@pytest.fixture(scope="session")
def base_url() -> str:
    if not (SITE / "index.html").exists():
        pytest.fail("site/ is not built: run `nox -s docs` first", pytrace=False)
    handler = functools.partial(SiteHandler, directory=str(SITE))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}{PREFIX}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"Chromium not found at {CHROMIUM}: install it with `apt-get install -y chromium` "
            "(or set CHROMIUM to its path) to run the browser tests"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def pytest_terminal_summary(terminalreporter) -> None:
    if LAYOUT:
        terminalreporter.section("code layout")
        sideways = sum(count for count, _ in LAYOUT.values())
        widths = {page: width for page, (_, width) in LAYOUT.items() if width is not None}
        terminalreporter.write_line(f"code blocks scrolling sideways at 1280 px: {sideways}")
        if widths:
            page = min(widths, key=widths.get)
            terminalreporter.write_line(
                f"narrowest notebook code at 390 px: {widths[page]:.1%} of the screen (/{page})"
            )
    if not TRANSFER_SIZES:
        return
    terminalreporter.section(f"transfer size per page (every response body; limit {PAGE_LIMIT:,})")
    for page, (size, requests, _) in sorted(TRANSFER_SIZES.items(), key=lambda i: -i[1][0]):
        terminalreporter.write_line(f"{size:>10,} bytes  {requests:>3} requests  /{page}")
    largest = max(TRANSFER_SIZES, key=lambda page: TRANSFER_SIZES[page][0])
    requests = sum(requests for _, requests, _ in TRANSFER_SIZES.values())
    foreign = sum(foreign for _, _, foreign in TRANSFER_SIZES.values())
    terminalreporter.write_line(
        f"{len(TRANSFER_SIZES)} pages, {requests} requests, {foreign} to other hosts; largest: "
        f"/{largest} ({TRANSFER_SIZES[largest][0] / 1024 / 1024:.2f} MiB)"
    )
