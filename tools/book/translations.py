"""Translations: the same chapters, code and outputs, with the prose in another language.

A translation is a folder ``docs/<lang>/`` with one page for every English page of
``docs/en/`` at the same path, the API reference excepted (it stays English), and a config
``mkdocs.<lang>.yml`` that inherits ``mkdocs.yml``. The rules (see translations/README.md):

- **Code is the English code.** A translated chapter's code cells are the English ones,
  byte for byte, in the English order (`code_problems` names the first line that differs;
  ``python -m book translations --sync-code`` copies them over); otherwise the build fails.
  Its Markdown cells, and the ``caption`` and ``alt`` of a figure, given as metadata on the
  figure cell's marker, are its own. On a page translated from the current English, they
  follow the English's shape: as many Markdown cells between two code cells, with the same
  markers and formulas, and every figure's texts (`prose_problems`); otherwise the build
  fails too. On a stale page they need not: the English moved, and the page says so.
- **Outputs are the English outputs.** The page is `compose`'d from the English chapter's
  single execution: the translated Markdown, the English code cells with their outputs,
  the figures' captions and alt text replaced. No translated chapter is executed.
- **A code cell may belong to one language** (``# %% lang="vi"``, `book.lang`): every
  chapter holds it, and only that language's page shows it, with its outputs. An English
  chapter that has such cells is `compose`'d too, from its execution without the others.
- **Staleness is recorded.** Each page records `prose_hash` of the English prose it was
  translated from: ``english="<hash>"`` on the first cell's marker of a chapter, or
  ``english: <hash>`` in a Markdown page's front matter (``--stamp`` writes it). When the
  English prose changes, the page says so (`book.mkdocs_hooks`) and `status` lists it.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat
from jupytext.cell_metadata import text_to_metadata

from book import ROOT, BookError, executor, expectations, lang, shown

DOCS = ROOT / "docs"
ENGLISH = DOCS / "en"
UNTRANSLATED = ("reference",)  # folders of docs/en/ that every language links to in English
OWN_METADATA = ("english",)  # marker metadata a translated page adds on its first cell
FIGURE_METADATA = ("caption", "alt")  # and on a figure cell
_FRONT_MATTER = re.compile(r"\A---\n(.*?\n)---\n", re.S)
_STAMP = re.compile(r"^english:[ \t]*(\S+)[ \t]*$", re.M)


def languages() -> list[str]:
    """The translations, from their configs: ``mkdocs.vi.yml`` -> ``"vi"``."""
    return sorted(path.name.split(".")[1] for path in ROOT.glob("mkdocs.*.yml"))


def english_pages() -> list[str]:
    """Every English page that a translation must have, relative to ``docs/en/``."""
    return sorted(
        path.relative_to(ENGLISH).as_posix()
        for path in ENGLISH.rglob("*")
        if path.suffix in (".md", ".py") and path.relative_to(ENGLISH).parts[0] not in UNTRANSLATED
    )


def english_of(page: Path) -> Path:
    """The English original of a translated page, ``docs/vi/x.py`` -> ``docs/en/x.py``."""
    relative = page.resolve().relative_to(DOCS)
    return ENGLISH.joinpath(*relative.parts[1:])


def language_of(page: Path) -> str:
    """The language of a page of the book, ``docs/vi/x.py`` -> ``"vi"``."""
    return page.resolve().relative_to(DOCS).parts[0]


# --------------------------------------------------------------------------- cells


@dataclass
class Cell:
    """One ``# %%`` cell of a chapter source: where it is, its marker's metadata, its text."""

    line: int
    markdown: bool
    metadata: dict
    text: str  # the lines after the marker, expected block included, trailing blanks not


def cells(source: Path) -> list[Cell]:
    """The cells of a chapter source file."""
    header, parsed = expectations.split_cells(source.read_text(encoding="utf-8"))
    if any(line.strip() for line in header):
        raise BookError(f"{shown(source)}, line 1: a chapter must start with a '# %%' marker")
    result = []
    for cell in parsed:
        _, metadata = text_to_metadata(cell.marker.removeprefix("# %%").strip(), True)
        text = "\n".join(cell.text().splitlines()[1:]).rstrip()
        result.append(Cell(cell.line, not cell.is_code, metadata, text))
    return result


def _figure_texts(code: str) -> list[str]:
    """The ``caption=`` and ``alt=`` strings of the calls in a code cell (prose in code)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [
        keyword.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg in FIGURE_METADATA
        and isinstance(keyword.value, ast.Constant)
        and isinstance(keyword.value.value, str)
    ]


def _math(markdown: str) -> list[str]:
    """The formulas of a Markdown cell, in order of their TeX, spacing normalised."""
    # One line: inline math may wrap, and English and translation wrap in different places.
    text = " ".join(line.removeprefix("#").removeprefix(" ") for line in markdown.splitlines())
    return sorted(" ".join(formula.split()) for formula in expectations.MATH.findall(text))


def prose(english: Path) -> str:
    """What a translator translates: a Markdown page, or a chapter's Markdown and figures."""
    text = english.read_text(encoding="utf-8")
    if english.suffix == ".md":
        return _FRONT_MATTER.sub("", text)
    parts = []
    for cell in cells(english):
        parts += [cell.text] if cell.markdown else _figure_texts(cell.text)
    return "\n\n".join(parts)


def prose_hash(english: Path) -> str:
    """A short hash of the English prose (`prose`), recorded by each translation of it."""
    return hashlib.sha256(prose(english).encode()).hexdigest()[:12]


def recorded_hash(page: Path) -> str | None:
    """The English prose hash that a translated page records, if any."""
    if page.suffix == ".md":
        front = _FRONT_MATTER.match(page.read_text(encoding="utf-8"))
        found = _STAMP.search(front[1]) if front else None
        return found[1] if found else None
    first = cells(page)[:1]
    return first[0].metadata.get("english") if first else None


def _segments(chapter: list[Cell]) -> tuple[list[list[Cell]], list[Cell]]:
    """The Markdown cells before each code cell and after the last, and the code cells."""
    segments: list[list[Cell]] = [[]]
    code = []
    for cell in chapter:
        if cell.markdown:
            segments[-1].append(cell)
        else:
            code.append(cell)
            segments.append([])
    return segments, code


def _own(metadata: dict, keys: tuple[str, ...]) -> dict:
    return {key: value for key, value in metadata.items() if key not in keys}


def code_problems(page: Path) -> list[str]:
    """How a translated chapter's code differs from the English code (empty: it agrees).

    The code cells must be the English ones, in the English order, with the English marker
    metadata (a figure's ``caption`` and ``alt`` aside). Each message names the translated
    file and line, and the English line.
    """
    english = english_of(page)
    (_, ours), (_, theirs) = _segments(cells(page)), _segments(cells(english))
    where = shown(page)
    if len(ours) != len(theirs):
        return [
            f"{where}: {len(ours)} code cells, but {shown(english)} has {len(theirs)}; add or "
            "remove the changed cells as in the English, then run --sync-code"
        ]
    problems = []
    for cell, original in zip(ours, theirs, strict=True):
        metadata = _own(cell.metadata, (*OWN_METADATA, *FIGURE_METADATA))
        if metadata != original.metadata:
            problems.append(
                f"{where}, line {cell.line} (English line {original.line}): the marker says "
                f"{metadata}, the English {original.metadata}"
            )
        if cell.text != original.text:
            mine, english_lines = cell.text.splitlines(), original.text.splitlines()
            first = next(
                (i for i, (a, b) in enumerate(zip(mine, english_lines, strict=False)) if a != b),
                min(len(mine), len(english_lines)),
            )
            got = mine[first] if first < len(mine) else "(end of cell)"
            want = english_lines[first] if first < len(english_lines) else "(end of cell)"
            problems.append(
                f"{where}, line {cell.line + 1 + first}: code differs from the English "
                f"({shown(english)}, line {original.line + 1 + first}): {got!r} where the "
                f"English has {want!r}; code cells are the English ones (python -m book "
                "translations --sync-code copies them)"
            )
    return problems


def prose_problems(page: Path) -> list[str]:
    """Where a translated chapter's prose does not follow the English prose's shape.

    Between two code cells it has as many Markdown cells as the English, with the same
    markers and the same formulas, and every figure has its caption and alt text. On a page
    translated from the current English these are a translator's mistakes; on a stale page,
    the English changed, and the page says so.
    """
    english = english_of(page)
    (sections, ours), (english_sections, theirs) = _segments(cells(page)), _segments(cells(english))
    where = shown(page)
    problems = []
    for section, original in zip(sections, english_sections, strict=False):
        at = f"{where}, line {section[0].line if section else '?'}"
        if [_own(c.metadata, OWN_METADATA) for c in section] != [c.metadata for c in original]:
            line = original[0].line if original else "?"
            problems.append(
                f"{at}: the Markdown cells here are not those of the English (line {line}): "
                f"{len(section)} where it has {len(original)}, or other markers"
            )
        mine = _math("\n".join(c.text for c in section))
        theirs_math = _math("\n".join(c.text for c in original))
        if mine != theirs_math:
            problems.append(
                f"{at}: the formulas differ from the English: the English has "
                f"{sorted(set(theirs_math) - set(mine))}, the translation "
                f"{sorted(set(mine) - set(theirs_math))}"
            )
    for cell, original in zip(ours, theirs, strict=False):
        at = f"{where}, line {cell.line} (English line {original.line})"
        figures = _figure_texts(original.text)
        given = [key for key in FIGURE_METADATA if key in cell.metadata]
        if figures and len(given) < len(FIGURE_METADATA):
            problems.append(
                f"{at}: this figure's caption and alt text are not translated: add "
                'caption="..." alt="..." to the cell marker'
            )
        if given and not figures:
            problems.append(f"{at}: {given} on a cell that draws no figure")
    return problems


def number_problems(page: Path, executed: Path) -> list[str]:
    """Numbers that the translated prose quotes and that no output the page shows prints
    (a code cell of another language is not shown, `book.lang`).

    The English chapter's prose is held to the same rule by `book.checker`.
    """
    nb = nbformat.read(executed, as_version=4)
    on_page = lang.shown_cells(nb.cells, language_of(page))
    outputs = [expectations.output_text(cell) for cell in on_page if cell.cell_type == "code"]
    return [
        f"{shown(page)}, line {cell.line}: the prose quotes {number}, which no output of the "
        "chapter prints"
        for cell in cells(page)
        if cell.markdown
        for number in expectations.prose_numbers(cell.text)
        if not expectations.appears_in(number, outputs)
    ]


# --------------------------------------------------------------------------- pages


def _figure_html(html_text: str, caption: str, alt: str) -> str:
    """The figure's HTML with its caption and alt text replaced (`AttentionFigure`)."""
    replaced, alts = re.subn(
        r'alt="[^"]*"', lambda _: f'alt="{html.escape(alt)}"', html_text, count=1
    )
    replaced, captions = re.subn(
        r"<figcaption>.*?</figcaption>",
        lambda _: f"<figcaption>{html.escape(caption)}</figcaption>",
        replaced,
        count=1,
        flags=re.S,
    )
    if (alts, captions) != (1, 1):
        raise BookError(f"expected a figure with alt text and a caption; got {html_text[:80]!r}")
    return replaced


def compose(page: Path, executed: Path) -> nbformat.NotebookNode:
    """The translated notebook: the page's Markdown and figure texts, the English code and
    outputs from ``executed`` (the English chapter's executed notebook).

    The page's Markdown cells go where they stand between the code cells; the code cells of
    another language are left out (`book.lang`). A figure whose caption is not translated
    (the English changed since) keeps its English caption. An English page is ``executed``
    without the other languages' code cells.

    Raises:
        BookError: If the page's code cells are not the English ones, or a ``lang`` is not
            a language of the book.
    """
    language = language_of(page)
    problems = lang.problems(english_of(page), languages())
    if language != lang.ENGLISH:
        problems += code_problems(page)
    if problems:
        raise BookError("\n".join(problems))
    nb = nbformat.read(executed, as_version=4)
    if language == lang.ENGLISH:
        nb.cells = lang.shown_cells(nb.cells, language)
        return nb
    translated = jupytext.reads(
        expectations.strip_expected(page.read_text(encoding="utf-8")), fmt="py:percent"
    )
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    marked = [cell for cell in translated.cells if cell.cell_type == "code"]
    cells_out: list[nbformat.NotebookNode] = []
    position = 0
    for cell in translated.cells:
        if cell.cell_type == "markdown":
            metadata = _own(cell.metadata, OWN_METADATA)
            markdown = nbformat.v4.new_markdown_cell(cell.source, metadata=metadata)
            markdown.id = f"translated-{len(cells_out)}"  # the same on every build
            cells_out.append(markdown)
            continue
        english_cell, mine = code[position], marked[position]
        position += 1
        if not lang.shows(english_cell.metadata, language):
            continue
        if "caption" in mine.metadata and "alt" in mine.metadata:
            for output in english_cell.get("outputs", []):
                data = output.get("data", {})
                if "<figcaption>" in data.get("text/html", ""):
                    data["text/html"] = _figure_html(
                        data["text/html"], mine.metadata["caption"], mine.metadata["alt"]
                    )
        cells_out.append(english_cell)
    nb.cells = lang.shown_cells(cells_out, language)  # all shown; marks its own language's
    return nb


def composed_path(page: Path, executed: Path) -> Path:
    """Where the composed notebook of ``page`` is cached: by the page, the execution, and
    what composes it (this module, `book.lang`, jupytext, nbformat)."""
    digest = hashlib.sha256(page.read_bytes() + executed.read_bytes())
    digest.update(Path(__file__).read_bytes() + Path(lang.__file__).read_bytes())
    digest.update(f"{jupytext.__version__} {nbformat.__version__}".encode())
    relative = page.resolve().relative_to(DOCS).with_suffix("")
    return (
        ROOT
        / ".cache"
        / "translations"
        / relative
        / digest.hexdigest()[:16]
        / page.with_suffix(".ipynb").name
    )


def write_composed(page: Path, executed: Path) -> Path:
    """Compose ``page`` (cached) and return the notebook's path.

    An English page whose code cells all belong to every language is ``executed`` itself.
    """
    if language_of(page) == lang.ENGLISH and not lang.marked(page):
        return executed
    target = composed_path(page, executed)
    if not target.exists():
        executor.store(compose(page, executed), target)
    return target


# --------------------------------------------------------------------------- upkeep


@dataclass
class Status:
    """How one language's pages stand against the English."""

    language: str
    missing: list[str] = field(default_factory=list)  # English pages with no translation
    extra: list[str] = field(default_factory=list)  # translated pages with no English page
    problems: list[str] = field(default_factory=list)  # code that is not the English code
    stale: list[str] = field(default_factory=list)  # translated from older English prose
    current: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.missing or self.extra or self.problems)


def translated_pages(language: str) -> list[str]:
    folder = DOCS / language
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.suffix in (".md", ".py")
    )


def status(language: str) -> Status:
    """Compare ``docs/<language>/`` with ``docs/en/``, page by page.

    A page whose code differs fails; so does a page translated from the current English
    whose prose does not follow its shape (`prose_problems`). A stale page does not.
    """
    result = Status(language)
    wanted, have = english_pages(), translated_pages(language)
    result.missing = [page for page in wanted if page not in have]
    result.extra = [page for page in have if page not in wanted]
    for page in (p for p in wanted if p in have):
        path = DOCS / language / page
        try:
            stale = recorded_hash(path) != prose_hash(ENGLISH / page)
            if path.suffix == ".py":
                result.problems += code_problems(path)
                if not stale:
                    result.problems += prose_problems(path)
        except (BookError, ValueError) as error:  # a file that cannot be read as a chapter
            result.problems.append(f"{shown(path)}: {error}")
            continue
        (result.stale if stale else result.current).append(page)
    return result


def stamp(page: Path) -> bool:
    """Record the current English prose hash in a translated page; return whether it changed.

    Raises:
        BookError: If ``page`` is not a page of a translation.
    """
    relative = page.resolve().relative_to(DOCS) if page.resolve().is_relative_to(DOCS) else None
    if relative is None or relative.parts[0] not in languages() or not page.is_file():
        raise BookError(
            f"{page}: not a page of a translation (docs/<lang>/..., lang in {languages()})"
        )
    digest = prose_hash(english_of(page))
    text = page.read_text(encoding="utf-8")
    if page.suffix == ".md":
        front = _FRONT_MATTER.match(text)
        if front is None:
            new = f"---\nenglish: {digest}\n---\n\n{text}"
        elif _STAMP.search(front[1]):
            new = (
                text[: front.start(1)]
                + _STAMP.sub(f"english: {digest}", front[1])
                + text[front.end(1) :]
            )
        else:
            new = text[: front.end(1)] + f"english: {digest}\n" + text[front.end(1) :]
    else:
        lines = text.split("\n")
        first = next(i for i, line in enumerate(lines) if line.startswith("# %%"))
        marker = re.sub(r'\s+english="[^"]*"', "", lines[first])
        lines[first] = f'{marker} english="{digest}"'
        new = "\n".join(lines)
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


def sync_code(page: Path) -> bool:
    """Copy the English code cells into a translated chapter that has the English cells.

    Markdown cells, and the translated figure texts on the markers, are kept.

    Returns:
        Whether the file changed.

    Raises:
        BookError: If it has not as many code cells as the English: then the translation
            needs a translator to add or remove cells, not a copy.
    """
    english = english_of(page)
    header, ours = expectations.split_cells(page.read_text(encoding="utf-8"))
    _, theirs = expectations.split_cells(english.read_text(encoding="utf-8"))
    code = [cell for cell in ours if cell.is_code]
    english_code = [cell for cell in theirs if cell.is_code]
    if len(code) != len(english_code):
        raise BookError(
            f"{shown(page)}: {len(code)} code cells, but {shown(english)} has "
            f"{len(english_code)}; add or remove the changed cells by hand, then run "
            "--sync-code again"
        )
    for mine, original in zip(code, english_code, strict=True):
        _, metadata = text_to_metadata(mine.marker.removeprefix("# %%").strip(), True)
        keep = [*OWN_METADATA]
        if _figure_texts("\n".join(original.body)):
            keep += FIGURE_METADATA
        own = "".join(f' {key}="{_quoted(metadata[key])}"' for key in keep if key in metadata)
        mine.marker = original.marker + own
        mine.body, mine.expected = list(original.body), copy.copy(original.expected)
    new = expectations.join_cells(header, ours)
    old = page.read_text(encoding="utf-8")
    if new != old:
        page.write_text(new, encoding="utf-8")
    return new != old


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
