"""Build the whole site: English, then every translation, each into ``site/<lang>/``.

Each page's inline figures then move to files beside it (`book.figures`), and the root of
``site/`` gets three things of its own:

- ``index.html`` sends the reader to English;
- ``404.html``, for hosts that serve one 404 page for every missing URL (GitHub Pages):
  English, and for a URL under another language's folder, that language's 404 page;
- a redirect from each English page's address before the translations (``chapter-3/...``)
  to its new one (``en/chapter-3/...``), so older links keep working.
"""

from __future__ import annotations

import contextlib
import html
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from book import BookError, figures, paths


def configs(languages: list[str] | None = None) -> list[Path]:
    """English first (it executes the chapters), then every translation (or those given).

    Raises:
        BookError: If a language given has no config.
    """
    known = paths.translations()
    unknown = sorted(set(languages or []) - set(known) - {paths.ENGLISH})
    if unknown:
        raise BookError(f"no config for {unknown}: the languages are {paths.ENGLISH} and {known}")
    others = [language for language in known if languages is None or language in languages]
    return [paths.config(language) for language in [paths.ENGLISH, *others]]


def site_path() -> str:
    """The path of the site's root on its host, from site_url: ``/attention-mechanisms/``."""
    config = yaml.load(paths.CONFIG.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    english = urlsplit(config["site_url"]).path  # .../en/
    return english.rstrip("/").rpartition("/")[0] + "/"


def _redirect(target: str, title: str) -> str:
    target = html.escape(target)
    return (
        f'<!doctype html>\n<html lang="{paths.ENGLISH}">\n<head>\n<meta charset="utf-8">\n'
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


def write_root(site: Path | None = None) -> None:
    """The root's index, 404 page and redirects (see the module doc)."""
    site = paths.SITE if site is None else site
    english = site / paths.ENGLISH
    (site / "index.html").write_text(_redirect(f"{paths.ENGLISH}/", "English"), encoding="utf-8")
    pick = _PICK_404 % {
        "root": json.dumps(site_path()),
        "languages": json.dumps(paths.translations()),
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
        target = "../" * depth + f"{paths.ENGLISH}/{relative.as_posix()}/"
        old.write_text(_redirect(target, relative.as_posix()), encoding="utf-8")


def build(languages: list[str] | None = None) -> list[Path]:
    """Build English, then every translation (or those given), in strict mode; then the root.

    First the playground's JavaScript runs in Node beside the package (`book.playground_check`),
    on the chapter-3 stages and on the trained model (which this trains, or takes from the
    cache): a difference beyond float32 rounding stops the build before anything is written.

    English builds first: it executes the chapters that are stale. The translations only
    read those executions, so they build side by side, each in its own process, and each
    one's log is printed whole when it ends.

    Returns:
        The configs built.

    Raises:
        BookError: If the playground's JavaScript differs from the package, or a build fails
            (its log says why).
    """
    built = configs(languages)
    from book import playground_check  # imports torch, which only this step needs

    problems = playground_check.verify() + playground_check.verify_trained()
    if problems:
        raise BookError("\n".join([*problems[:10], f"{len(problems)} difference(s) in all"]))
    shutil.rmtree(paths.SITE, ignore_errors=True)
    english, *others = built
    if subprocess.run(_mkdocs(english), cwd=paths.ROOT).returncode:
        raise BookError(f"building {english.name} failed (see above)")
    failed = []
    with contextlib.ExitStack() as logs:
        running = []
        for config in others:
            # Each log goes to a file, not a pipe: a pipe could fill up and stall its build.
            log = logs.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            process = subprocess.Popen(_mkdocs(config), cwd=paths.ROOT, stdout=log, stderr=log)
            running.append((config, process, log))
        for config, process, log in running:
            process.wait()
            log.seek(0)
            print(log.read(), end="", flush=True)
            if process.returncode:
                failed.append(config.name)
    if failed:
        raise BookError(f"building {', '.join(failed)} failed (see above)")
    figures.externalize(paths.SITE)
    write_root()
    return built


def _mkdocs(config: Path) -> list[str]:
    return [sys.executable, "-m", "mkdocs", "build", "--config-file", str(config)]
