"""Present a chapter page: mkdocs-jupyter's notebook HTML as plain, light Material markup.

mkdocs-jupyter renders a notebook with nbconvert's JupyterLab template: 600 kB of inline
CSS and a copy-button script on every page, ``In [n]:`` prompts, nested ``jp-*`` wrappers,
each code cell's source a second time in a hidden element, and the cell tags as a toolbar.
`simplify` keeps what the reader needs and gives it the markup that Material already styles:

- a Markdown cell becomes its rendered HTML, so headings, paragraphs and tables sit in
  the page like those of any Markdown page;
- a code cell becomes a Material code block (``div.highlight > pre > code``: Material's
  colours and its copy button) followed by its outputs in ``div.nb-output``;
- each run of cells tagged ``solution`` is folded into ``<details>``, here and not in the
  notebook, so the downloaded notebook stays plain;
- a class shown as the lines that change from another (`book.include`) shows that diff, and
  folds its whole code under it;
- outputs are left out of the search index (``data-search-exclude``): they are numbers,
  and they would double the index that every page loads.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, NavigableString, Tag

_TEMPLATE = ("style", "script")  # what nbconvert's template puts around the notebook


class NotebookHTMLError(ValueError):
    """The HTML is not the shape mkdocs-jupyter produces (its template changed?)."""


def _wrap_in_code(pre: Tag, soup: BeautifulSoup) -> None:
    """Put the lines of a highlighted ``<pre>`` into ``<code>``, as Material's blocks have.

    A name (pygments' ``n``) is drawn in the code's own colour (Material's
    ``--md-code-hl-name-color`` is ``--md-code-fg-color``), and so is whitespace (``w``):
    their spans are dropped, the text kept. They are a tenth of a chapter page's markup.
    """
    for span in pre.select("span.n, span.w"):
        if span.get("class") in (["n"], ["w"]):
            span.unwrap()
    code = soup.new_tag("code")
    for child in list(pre.children):
        if isinstance(child, Tag) and child.name == "span" and not child.contents:
            continue  # pygments' empty leading <span></span> stays outside <code>
        code.append(child.extract())
    pre.append(code)


def _code_block(cell: Tag, soup: BeautifulSoup) -> Tag | None:
    """The cell's source as a Material code block, or None for a cell shown without input."""
    source = cell.select_one(".highlight-ipynb > pre")
    if source is None:
        return None
    _wrap_in_code(source, soup)
    block = soup.new_tag("div", attrs={"class": "language-python highlight"})
    block.append(source.extract())
    return block


def _outputs(cell: Tag, soup: BeautifulSoup) -> list[Tag]:
    """The cell's outputs, each in a ``div.nb-output`` that the search index leaves out."""
    outputs = []
    for output in cell.select(".jp-OutputArea-output"):
        kept = soup.new_tag("div", attrs={"class": "nb-output", "data-search-exclude": ""})
        if output.get("data-mime-type"):
            kept["data-mime-type"] = output["data-mime-type"]
        for child in list(output.children):
            kept.append(child.extract())
        outputs.append(kept)
    return outputs


def _tags(cell: Tag) -> list[str]:
    """The cell's tags: nbconvert marks a code cell's div, and a Markdown cell's content."""
    elements = [cell, *cell.select(".jp-RenderedMarkdown")]
    classes = [name for element in elements for name in element.get("class", [])]
    return [name.removeprefix("celltag_") for name in classes if name.startswith("celltag_")]


def _markdown(cell: Tag) -> list:
    rendered = cell.select_one(".jp-RenderedMarkdown")
    return list(rendered.children) if rendered is not None else []


def _code(cell: Tag, soup: BeautifulSoup) -> list:
    """A code cell as ``div.nb-cell``: its code block, then its outputs.

    A cell tagged ``wrap-output`` has prose-like output whose long lines wrap; a cell of one
    language's page (`book.source`) carries ``data-lang``; a cell filled from the package
    (`book.include`) carries ``data-include``, the name of what it defines.
    """
    tags = _tags(cell)
    wrapper = soup.new_tag(
        "div", attrs={"class": "nb-cell" + (" nb-wrap" * ("wrap-output" in tags))}
    )
    for prefix, attribute in (("lang-", "data-lang"), ("include:", "data-include")):
        for tag in tags:
            if tag.startswith(prefix):
                wrapper[attribute] = tag.removeprefix(prefix)
    block = _code_block(cell, soup)
    outputs = _outputs(cell, soup)
    if block is not None and any(tag.startswith("diff-from:") for tag in tags):
        block = _changes_first(block, outputs, soup)
    for part in [block] if block is not None else []:
        wrapper.append(part)
    for output in outputs:
        wrapper.append(output)
    return [wrapper]


def _changes_first(block: Tag, outputs: list[Tag], soup: BeautifulSoup) -> Tag:
    """A class shown as its changes (`book.include`): the diff, then the whole class folded."""
    diffs = [output for output in outputs if output.select_one(".book-changes")]
    if len(diffs) != 1:
        raise NotebookHTMLError(f"a diff-from cell has {len(diffs)} diff outputs, not 1")
    outputs.remove(diffs[0])
    fold = soup.new_tag("details", attrs={"class": "book-whole-class"})
    summary = soup.new_tag("summary")  # a translated page gets its own words (page.py)
    summary.string = "The whole class"
    fold.append(summary)
    fold.append(block)
    group = soup.new_tag("div", attrs={"class": "book-class-changes"})
    group.append(diffs[0].select_one(".book-changes").extract())
    group.append(fold)
    return group


def _notebook(soup: BeautifulSoup) -> Tag:
    """The notebook's element, after checking that the template put nothing else around it
    but its CSS and scripts (the site has its own)."""
    notebook = soup.select_one("div.jupyter-wrapper > div.jp-Notebook")
    if notebook is None:
        raise NotebookHTMLError("no div.jupyter-wrapper > div.jp-Notebook in the page")
    wrapper = notebook.parent
    for element in soup.contents:
        if isinstance(element, Tag) and element is not wrapper and element.name not in _TEMPLATE:
            raise NotebookHTMLError(f"unexpected <{element.name}> outside the notebook")
        if type(element) is NavigableString and element.strip():
            raise NotebookHTMLError(f"unexpected text outside the notebook: {element[:40]!r}")
    return notebook


def _restyle(cell: Tag, soup: BeautifulSoup) -> None:
    """Material's markup for a cell's tables (they scroll in their own box on a phone), its
    fenced blocks (Material code blocks) and its heading links."""
    for table in cell.select(".jp-RenderedMarkdown table"):
        box = soup.new_tag("div", attrs={"class": "md-typeset__table"})
        table.wrap(box).wrap(soup.new_tag("div", attrs={"class": "md-typeset__scrollwrap"}))
    for pre in cell.select(".jp-RenderedMarkdown div.highlight > pre"):
        if pre.code is None:
            _wrap_in_code(pre, soup)
    for anchor in cell.select("a.anchor-link"):
        anchor["class"] = ["headerlink"]
        anchor["title"] = "Permanent link"


def simplify(soup: BeautifulSoup) -> Tag:
    """The notebook part of a chapter page, rewritten as described in the module doc.

    ``soup`` is the whole page content as mkdocs-jupyter rendered it; the result is the new
    content, built in the same soup.
    """
    notebook = _notebook(soup)
    root = soup.new_tag("div", attrs={"class": "notebook"})
    solution: Tag | None = None
    for cell in notebook.find_all("div", class_="jp-Cell", recursive=False):
        _restyle(cell, soup)
        if "jp-MarkdownCell" in cell["class"]:
            parts = _markdown(cell)
        elif "jp-CodeCell" in cell["class"]:
            parts = _code(cell, soup)
        else:
            raise NotebookHTMLError(f"unexpected cell with classes {cell['class']}")
        if "solution" not in _tags(cell):
            solution = None
        elif solution is None:
            solution = soup.new_tag("details", attrs={"class": "success book-solution"})
            summary = soup.new_tag("summary")  # a translated page gets its own word (page.py)
            summary.string = "Solution"
            solution.append(summary)
            root.append(solution)
        target = root if solution is None else solution
        for part in parts:
            target.append(part.extract())
    return root
