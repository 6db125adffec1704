"""Publish the book: build the whole site.

`build_site` builds English, then every translation, each into ``site/<lang>/``; then each
page's inline figures move to files beside it (`externalize`: a base64 PNG is a third
larger, and fetched again with every visit), and the root of ``site/`` gets an
``index.html`` that sends the reader to English, a ``404.html`` (English, or under another
language's folder that language's), and a redirect from each English page's address before
the translations (``chapter-3/...``) to its new one (``en/chapter-3/...``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from book import BookError
from book.build import ENGLISH, Build


def _redirect(target: str, title: str) -> str:
    target = html.escape(target)
    return (
        f'<!doctype html>\n<html lang="{ENGLISH}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f'<meta http-equiv="refresh" content="0; url={target}">\n'
        # A refresh drops the URL's #section; the script keeps it, where scripts run.
        f"<script>location.replace({json.dumps(target)} + location.hash)</script>\n"
        f'<link rel="canonical" href="{target}">\n</head>\n'
        f'<body><p><a href="{target}">{html.escape(title)}</a></p></body>\n</html>\n'
    )


# Before the page is drawn: under another language's folder, show that language's 404 page.
_PICK_404 = """<script>
(function () {
  var root = %(root)s, languages = %(languages)s;
  var language = location.pathname.slice(root.length).split("/")[0];
  if (location.pathname.indexOf(root) !== 0 || languages.indexOf(language) < 0) return;
  fetch(root + language + "/404.html").then(function (response) {
    return response.ok ? response.text() : null;
  }).then(function (page) {
    if (page) { document.open(); document.write(page); document.close(); }
  });
})();
</script>"""


def write_root(build: Build) -> None:
    """The root's index, 404 page and redirects (see the module doc)."""
    site = build.site
    english = site / ENGLISH
    (site / "index.html").write_text(_redirect(f"{ENGLISH}/", "English"), encoding="utf-8")
    pick = _PICK_404 % {
        "root": json.dumps(build.site_path),
        "languages": json.dumps(build.translations),
    }
    page = (english / "404.html").read_text(encoding="utf-8")
    (site / "404.html").write_text(page.replace("<head>", f"<head>\n{pick}", 1), encoding="utf-8")
    for index in english.rglob("index.html"):
        relative = index.parent.relative_to(english)
        if relative == Path("."):
            continue
        depth = len(relative.parts)
        old = site / relative / "index.html"
        old.parent.mkdir(parents=True, exist_ok=True)
        target = "../" * depth + f"{ENGLISH}/{relative.as_posix()}/"
        old.write_text(_redirect(target, relative.as_posix()), encoding="utf-8")


def build_site(build: Build, languages: list[str]) -> list[Path]:
    """Build English, then the ``languages`` given (every translation if none), in strict
    mode; then the root (see the module doc).

    English builds first: it executes the chapters that are stale. The translations only read those
    executions, so they build side by side, each in its own process, and each one's log is
    printed whole when it ends.

    Returns:
        The configs built.

    Raises:
        BookError: If a language is unknown, or a build fails (its log says why).
    """
    unknown = sorted(set(languages) - set(build.languages))
    if unknown:
        raise BookError(f"no language {unknown}: the languages are {build.languages}")
    others = [lang for lang in build.translations if not languages or lang in languages]
    shutil.rmtree(build.site, ignore_errors=True)
    english = build.config(ENGLISH)
    if subprocess.run(_mkdocs(english), cwd=build.root).returncode:
        raise BookError(f"building {english.name} failed (see above)")
    failed = []
    with contextlib.ExitStack() as logs:
        running = []
        for config in map(build.config, others):
            # Each log goes to a file, not a pipe: a pipe could fill up and stall its build.
            log = logs.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            process = subprocess.Popen(_mkdocs(config), cwd=build.root, stdout=log, stderr=log)
            running.append((config, process, log))
        for config, process, log in running:
            process.wait()
            log.seek(0)
            print(log.read(), end="", flush=True)
            if process.returncode:
                failed.append(config.name)
    if failed:
        raise BookError(f"building {', '.join(failed)} failed (see above)")
    externalize(build.site)
    write_root(build)
    return [english, *map(build.config, others)]


def _mkdocs(config: Path) -> list[str]:
    return [sys.executable, "-m", "mkdocs", "build", "--config-file", str(config)]


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
