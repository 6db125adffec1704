"""The key an executed chapter is cached under: everything that can change what it shows.

- the chapter's source, without its expected-output blocks (editing an expectation does not
  execute the chapter again; `book.checker` compares it with the cached outputs),
- every file of ``src/attention_mechanisms/`` (its code, and data such as the checker's
  messages),
- the modules of the tooling that decide what executes (`TOOLING`): `book.executor`, this
  one, `book.source`, `book.include` and `book.changes`,
- the Python version and every installed distribution with its version (torch,
  matplotlib, jupytext, ...).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import sys
import time
from pathlib import Path

from book import paths, source

TOOLING = ("executor", "keys", "source", "include", "changes")  # the modules of book hashed


@functools.cache
def environment() -> str:
    """The Python version and every installed distribution, one ``name-version`` a line.

    Read from the names of the ``*.dist-info`` folders on ``sys.path`` (which carry both),
    not from their metadata files: the same facts, ten times faster.
    """
    folders = {
        folder.name.removesuffix(".dist-info")
        for entry in map(Path, sys.path)
        if entry.is_dir()
        for folder in entry.glob("*.dist-info")
    }
    python = f"python-{sys.version_info.major}.{sys.version_info.minor}"
    return "\n".join([python, *sorted(folders)])


def _package_file(path: Path) -> bool:
    """A file of the package (its code and its data, such as the checker's messages), not
    Python's bytecode cache."""
    return path.is_file() and "__pycache__" not in path.parts


# The last `_tooling_digest`: each file's (path, mtime, size), and their digest.
_last: tuple[tuple, bytes] | None = None
# Seconds: a file's time is only as fine as the clock's tick (or the file system's: 2 s on
# FAT), so an edit within that time of the last one may leave its time and size unchanged.
_SETTLED = 2.0


def _tooling_digest() -> bytes:
    """Every file that decides what a chapter executes (see the module doc), then every file
    of the package, and the environment.

    Read and hashed once per process while the files stay the same (`_read_digest`): a later
    call compares their sizes and modification times only. As Git does with its index, files
    modified too recently for a later edit to show in their times (within `_SETTLED`
    seconds) are read again each time.
    """
    global _last
    modules = [Path(str(importlib.import_module(f"book.{name}").__file__)) for name in TOOLING]
    package = sorted(p for p in paths.PACKAGE.rglob("*") if _package_file(p))
    files = {path: path.stat() for path in (*modules, *package)}
    signature = (environment(), tuple((str(f), s.st_mtime_ns, s.st_size) for f, s in files.items()))
    if _last is not None and _last[0] == signature:
        return _last[1]
    settled = max(s.st_mtime for s in files.values()) < time.time() - _SETTLED
    digest = _read_digest(modules, package)
    _last = (signature, digest) if settled else None
    return digest


def _read_digest(modules: list[Path], package: list[Path]) -> bytes:
    digest = hashlib.sha256()
    for module in modules:
        digest.update(module.read_bytes())
    for path in package:
        digest.update(path.relative_to(paths.PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    digest.update(environment().encode())
    return digest.digest()


def cache_key(chapter: source.Chapter) -> str:
    """Hash of everything that can change what ``chapter`` shows (see the module doc)."""
    digest = hashlib.sha256(_tooling_digest())
    digest.update(chapter.text(expected=False).encode())
    return digest.hexdigest()[:16]
