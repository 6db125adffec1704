"""attention_mechanisms.plotting: heatmaps with alt text."""

from __future__ import annotations

import base64
import re
import struct

import pytest
import torch

from attention_mechanisms.plotting import show_attention

TOKENS = ["Your", "journey", "starts"]


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def test_one_matrix_becomes_a_figure_with_alt_text_and_caption():
    weights = torch.softmax(torch.randn(3, 3), dim=-1)
    figure = show_attention(weights, TOKENS, caption="Figure 1 <test>", alt='A "heatmap" & more')
    html = figure._repr_html_()
    assert 'alt="A &quot;heatmap&quot; &amp; more"' in html
    assert "<figcaption>Figure 1 &lt;test&gt;</figcaption>" in html
    data = re.search(r'src="data:image/png;base64,([^"]+)"', html).group(1)
    assert base64.b64decode(data) == figure._repr_png_()
    png_size(figure.png)


def test_one_panel_per_head():
    one = show_attention(torch.rand(3, 3), TOKENS, caption="c", alt="a")
    two = show_attention(torch.rand(2, 3, 3), TOKENS, caption="c", alt="a")
    (w1, h1), (w2, h2) = png_size(one.png), png_size(two.png)
    assert h1 == h2
    assert w2 == pytest.approx(2 * w1, rel=0.02)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"must have shape \(3, 3\) or .*got shape \(3, 4\)"):
        show_attention(torch.rand(3, 4), TOKENS, caption="c", alt="a")
    with pytest.raises(ValueError, match=r"head_titles must have one title per panel \(2\); got 1"):
        show_attention(torch.rand(2, 3, 3), TOKENS, caption="c", alt="a", head_titles=["x"])
    with pytest.raises(ValueError, match=r"alt must describe the figure"):
        show_attention(torch.rand(3, 3), TOKENS, caption="c", alt="  ")
    with pytest.raises(TypeError, match=r"weights must have a floating-point dtype"):
        show_attention(torch.ones(3, 3, dtype=torch.long), TOKENS, caption="c", alt="a")


def test_drawing_leaves_the_callers_matplotlib_backend_alone():
    # A notebook's backend (inline, widget, ...) must survive a figure; "svg" stands in for it.
    import matplotlib

    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        figure = show_attention(torch.rand(3, 3), TOKENS, caption="c", alt="a")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
    png_size(figure.png)


def test_a_figure_is_stored_in_at_most_256_colours_and_looks_the_same():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image, ImageChops

    from attention_mechanisms.plotting import show_figure

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.imshow(torch.rand(8, 8).numpy(), cmap="viridis")
    ax.plot(range(8), [x**0.5 for x in range(8)], color="red")
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=110)
    figure = show_figure(fig, caption="c", alt="a")
    assert figure.png[25] == 3, "PNG colour type 3: a palette"
    assert len(figure.png) < len(full.getvalue()) / 2
    before = Image.open(full).convert("RGB")
    after = Image.open(io.BytesIO(figure.png)).convert("RGB")
    assert after.size == before.size
    difference = ImageChops.difference(before, after).convert("L")
    mean = sum(i * n for i, n in enumerate(difference.histogram())) / (after.width * after.height)
    assert mean < 2, "each pixel within a few levels of the full-colour picture, on average"
