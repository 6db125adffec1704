"""Translations: the same chapters, code and outputs, with the prose in another language.

A translation is a folder ``docs/<lang>/`` with one page for every English page of
``docs/en/`` at the same path, the API reference excepted (it stays English), and a config
``mkdocs.<lang>.yml`` that inherits ``mkdocs.yml``. The rules (see translations/README.md):

- **Code is the English code.** A translated chapter has the English cells in the English
  order. Its code cells are the English ones, byte for byte (`code_problems` names the first
  line that differs; ``python -m book translations --sync-code`` copies them over). Only
  its Markdown cells, and the ``caption`` and ``alt`` of a figure, given as metadata on the
  figure cell's marker, are its own.
- **Outputs are the English outputs.** The page is `compose`'d from the English chapter's
  single execution: the translated Markdown, the English code cells with their outputs,
  the figures' captions and alt text replaced. No translated chapter is executed.
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

from book import ROOT, BookError, expectations, shown

DOCS = ROOT / "docs"
ENGLISH = DOCS / "en"
UNTRANSLATED = ("reference",)  # folders of docs/en/ that every language links to in English
OWN_METADATA = ("english",)  # marker metadata a translated Markdown cell may add
FIGURE_METADATA = ("caption", "alt")  # and a translated figure cell
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


def code_problems(page: Path) -> list[str]:
    """How a translated chapter's cells differ from the English ones (empty: they agree).

    Each message names the translated file and line, and the English line.
    """
    english = english_of(page)
    ours, theirs = cells(page), cells(english)
    where = shown(page)
    if [c.markdown for c in ours] != [c.markdown for c in theirs]:
        kinds = "".join("M" if c.markdown else "C" for c in theirs)
        mine = "".join("M" if c.markdown else "C" for c in ours)
        return [
            f"{where}: its cells are not the English cells of {shown(english)} (Markdown M, "
            f"code C, in order):\n  English:     {kinds}\n  translation: {mine}"
        ]
    problems = []
    for cell, original in zip(ours, theirs, strict=True):
        at = f"{where}, line {cell.line} (English line {original.line})"
        own = OWN_METADATA if cell.markdown else FIGURE_METADATA
        metadata = {k: v for k, v in cell.metadata.items() if k not in own}
        if metadata != original.metadata:
            problems.append(f"{at}: the marker says {metadata}, the English {original.metadata}")
        if cell.markdown:
            mine, english_math = _math(cell.text), _math(original.text)
            if mine != english_math:
                differ = sorted(set(mine) ^ set(english_math)) or mine
                problems.append(f"{at}: its math is not the English math: {differ}")
            continue
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
        figures = _figure_texts(original.text)
        given = [key for key in FIGURE_METADATA if key in cell.metadata]
        if figures and len(given) < len(FIGURE_METADATA):
            problems.append(
                f"{at}: this figure's caption and alt text are not translated: add "
                f'caption="..." alt="..." to the cell marker'
            )
        if given and not figures:
            problems.append(f"{at}: {given} on a cell that draws no figure")
    return problems


def number_problems(page: Path, executed: Path) -> list[str]:
    """Numbers that the translated prose quotes and that no output of the chapter prints.

    The English chapter's prose is held to the same rule by `book.checker`.
    """
    nb = nbformat.read(executed, as_version=4)
    outputs = [expectations.output_text(cell) for cell in nb.cells if cell.cell_type == "code"]
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
    replaced, alts = re.subn(r'alt="[^"]*"', f'alt="{html.escape(alt)}"', html_text)
    replaced, captions = re.subn(
        r"<figcaption>.*?</figcaption>",
        f"<figcaption>{html.escape(caption)}</figcaption>",
        replaced,
        flags=re.S,
    )
    if (alts, captions) != (1, 1):
        raise BookError(f"expected one figure with alt text and a caption; got {html_text[:80]!r}")
    return replaced


def compose(page: Path, executed: Path) -> nbformat.NotebookNode:
    """The translated notebook: the page's Markdown and figure texts, the English code and
    outputs from ``executed`` (the English chapter's executed notebook).

    Raises:
        BookError: If the page's code cells are not the English ones.
    """
    problems = code_problems(page)
    if problems:
        raise BookError("\n".join(problems))
    nb = nbformat.read(executed, as_version=4)
    translated = jupytext.reads(
        expectations.strip_expected(page.read_text(encoding="utf-8")), fmt="py:percent"
    )
    if len(translated.cells) != len(nb.cells):
        raise BookError(f"{shown(page)}: {len(translated.cells)} cells, {len(nb.cells)} executed")
    for mine, cell in zip(translated.cells, nb.cells, strict=True):
        if cell.cell_type == "markdown":
            cell.source = mine.source
        elif "caption" in mine.metadata:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if "text/html" in data:
                    data["text/html"] = _figure_html(
                        data["text/html"], mine.metadata["caption"], mine.metadata["alt"]
                    )
    return nb


def composed_path(page: Path, executed: Path) -> Path:
    """Where the composed notebook of ``page`` is cached (by the page and the execution)."""
    digest = hashlib.sha256(page.read_bytes() + executed.read_bytes())
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
    """Compose ``page`` (cached) and return the notebook's path."""
    target = composed_path(page, executed)
    if not target.exists():
        nb = compose(page, executed)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        nbformat.write(nb, partial)
        partial.replace(target)
        for old in target.parent.parent.iterdir():
            if old != target.parent:
                for file in old.iterdir():
                    file.unlink()
                old.rmdir()
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
    """Compare ``docs/<language>/`` with ``docs/en/``, page by page."""
    result = Status(language)
    wanted, have = english_pages(), translated_pages(language)
    result.missing = [page for page in wanted if page not in have]
    result.extra = [page for page in have if page not in wanted]
    for page in (p for p in wanted if p in have):
        path = DOCS / language / page
        if path.suffix == ".py":
            try:
                result.problems += code_problems(path)
            except BookError as error:
                result.problems.append(str(error))
        stale = recorded_hash(path) != prose_hash(ENGLISH / page)
        (result.stale if stale else result.current).append(page)
    return result


def stamp(page: Path) -> bool:
    """Record the current English prose hash in a translated page; return whether it changed."""
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
        marker = re.sub(r'\s+english="[^"]*"', "", lines[0])
        lines[0] = f'{marker} english="{digest}"'
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
        BookError: If the cells are not the English cells (count or kinds differ): then the
            translation needs a translator, not a copy.
    """
    english = english_of(page)
    header, ours = expectations.split_cells(page.read_text(encoding="utf-8"))
    _, theirs = expectations.split_cells(english.read_text(encoding="utf-8"))
    if [c.is_code for c in ours] != [c.is_code for c in theirs]:
        raise BookError(
            f"{shown(page)}: its cells are not those of {shown(english)}; add or remove the "
            "changed cells by hand, then run --sync-code again"
        )
    for mine, original in zip(ours, theirs, strict=True):
        if not mine.is_code:
            continue
        _, metadata = text_to_metadata(mine.marker.removeprefix("# %%").strip(), True)
        own = "".join(
            f' {key}="{_quoted(metadata[key])}"' for key in FIGURE_METADATA if key in metadata
        )
        figure = _figure_texts("\n".join(original.body))
        mine.marker = original.marker + own if figure else original.marker
        mine.body, mine.expected = list(original.body), copy.copy(original.expected)
    new = expectations.join_cells(header, ours)
    old = page.read_text(encoding="utf-8")
    if new != old:
        page.write_text(new, encoding="utf-8")
    return new != old


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
