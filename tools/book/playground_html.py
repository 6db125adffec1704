"""The playground's markup in a page: its data, its words and the default example as tables.

A page asks for the playground with one line of its own, `MARKER`; the hook
(`book.mkdocs_hooks.on_page_markdown`) puts `widget` in its place. The widget is:

- a JSON script with what the page starts from (`book.playground.page_data`) and the
  interface's words (``extra.playground`` in the language's config);
- the default example at every stage as static tables, computed by the package: what a
  reader without JavaScript sees. ``playground.js`` replaces them with the live widget;
- the trained model's stage: its manifest (`book.trained.manifest`), whose weights the page
  downloads from ``assets/`` when the reader picks that stage (`book.mkdocs_hooks` adds the
  file to every language's site);
- the scripts and the stylesheet, from the site's own ``assets/``.
"""

from __future__ import annotations

import html
import json

MARKER = '<div class="attention-playground"></div>'
ASSETS = (
    ("stylesheets/playground.css", '<link rel="stylesheet" href="{}">'),
    # In this order: each uses those above it (playground.js, all of them).
    *(
        (f"javascripts/{name}.js", '<script src="{}" defer></script>')
        for name in (
            "dom",
            "numbers",
            "attention",
            "induction",
            "trained",
            "tables",
            "explain",
            "fields",
            "playground",
        )
    ),
)


def _table(
    caption: str,
    values: list[list[str]],
    rows: list[str],
    columns: list[str],
    causal: bool = False,
    axes: tuple[str, str] | None = None,
) -> str:
    """A matrix as ``tables.js`` draws it: ``axes``, the words for queries and keys, name
    the rows and the columns of scores and weights."""
    corner, keys = axes or ("", None)
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in [corner, *columns])
    head = f"<tr>{head}</tr>"
    if keys is not None:
        span = f'<th scope="colgroup" colspan="{len(columns)}">{html.escape(keys)}</th>'
        head = f'<tr class="playground-axis"><td></td>{span}</tr>{head}'

    body = "".join(
        f'<tr><th scope="row">{html.escape(label)}</th>'
        + "".join(
            ('<td class="is-hidden">' if causal and j > i else "<td>") + f"{v}</td>"
            for j, v in enumerate(row)
        )
        + "</tr>"
        for i, (label, row) in enumerate(zip(rows, values, strict=True))
    )
    return (
        f'<div class="playground-box"><table><caption>{html.escape(caption)}</caption>'
        f"<thead>{head}</thead><tbody>{body}</tbody></table></div>"
    )


def _stage(stage: str, words: dict[str, str]) -> str:
    """The default example at ``stage``, as the package computes it, in static tables."""
    import torch  # here, not at the top: importing this module must stay cheap (the hook)

    from book import playground

    tokens = playground.TOKENS
    result = playground.reference(stage, playground.page_data()["inputs"], torch.float32)
    many = len(result["heads"]) > 1
    parts = [f'<p class="playground-stage-title">{html.escape(words[f"stage_{stage}"])}</p>']
    axes = (words["axis_queries"], words["axis_keys"])
    for number, found in enumerate(result["heads"], start=1):
        head = words["head"].format(n=number)
        for matrix in playground.matrices(stage)[:-1]:  # the context vectors: after the heads
            caption = words["head_matrix"].format(head=head, matrix=words[matrix])
            values = [[playground.format_value(v) for v in row] for row in found[matrix].tolist()]
            square = matrix in ("scores", "weights")
            columns = tokens if square else [str(d) for d in range(1, len(values[0]) + 1)]
            hide = square and playground.causal(stage)
            parts.append(
                _table(
                    caption if many else words[matrix],
                    values,
                    tokens,
                    columns,
                    hide,
                    axes if square else None,
                )
            )
    width = result["context"].shape[-1]
    columns = [str(d) for d in range(1, width + 1)]
    caption = words["joined"] if many else words["context"]
    context = [[playground.format_value(v) for v in row] for row in result["context"].tolist()]
    parts.append(_table(caption, context, tokens, columns))
    return f'<div class="playground-stage">{"".join(parts)}</div>'


def widget(words: dict[str, str], assets: str) -> str:
    """The playground's markup; ``assets`` is the URL of the site's ``assets/`` folder from
    the page (``../../assets/``)."""
    from book import playground, trained  # import torch: only the playground's page needs it

    data = {**playground.page_data(), "trained": trained.manifest(), "words": words}
    # "<" escaped: the JSON sits in a script element, which "</script>" would end.
    payload = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    links = "\n".join(markup.format(html.escape(assets + path)) for path, markup in ASSETS)
    stages = "".join(_stage(stage, words) for stage in playground.STAGES)
    return (
        f'<div class="attention-playground" data-playground data-assets="{html.escape(assets)}">\n'
        f'<script type="application/json" class="playground-data">{payload}</script>\n'
        # Left out of the search index: a reader searches for words, not for these numbers.
        # A section, not a div: Material's search stops excluding at the first inner </div>.
        f'<section class="playground-static" data-search-exclude>'
        f"<p>{html.escape(words['no_script'])}</p>{stages}"
        f"<p>{html.escape(words['no_script_trained'])}</p></section>\n"
        f"</div>\n{links}\n"
    )
