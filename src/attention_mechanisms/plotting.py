"""Pictures of attention weights, labelled with the tokens they belong to.

A heatmap makes an attention matrix readable at a glance: row ``i`` is query token ``i``,
column ``j`` is key token ``j``, and the shade is how much of token ``j`` flows into token
``i``'s context vector. The book's heatmaps are drawn with this function from the tensors the
chapter computes.

This module needs matplotlib (``pip install "attention-mechanisms[plot]"``); nothing else in
the package does, so it is imported only when you call it.
"""

from __future__ import annotations

import base64
import html
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from .checks import check_floating

if TYPE_CHECKING:  # matplotlib is optional: imported only when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["AttentionFigure", "show_attention", "show_figure"]


@dataclass(frozen=True, repr=False)
class AttentionFigure:
    """A rendered heatmap with its description, shown as an image with alt text.

    Notebooks display it through ``_repr_html_`` (a ``<figure>`` whose ``<img>`` carries the
    alt text and whose caption is the title) or ``_repr_png_``.

    Attributes:
        png: The PNG image.
        alt: A text description of what the image shows, for readers who cannot see it.
        caption: A short caption shown under the image.
    """

    png: bytes
    alt: str
    caption: str

    def __repr__(self) -> str:
        return f"AttentionFigure({self.caption!r})"

    def _repr_png_(self) -> bytes:
        return self.png

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        return (
            '<figure class="attention-figure">'
            f'<img src="data:image/png;base64,{data}" alt="{html.escape(self.alt)}">'
            f"<figcaption>{html.escape(self.caption)}</figcaption></figure>"
        )


def show_attention(
    weights: Tensor,
    tokens: Sequence[str],
    *,
    caption: str,
    alt: str,
    head_titles: Sequence[str] | None = None,
    decimals: int | None = 2,
) -> AttentionFigure:
    """Draw attention weights as annotated heatmaps, one panel per head.

    Shape notation:
        - ``T``: number of tokens, ``len(tokens)``
        - ``h``: number of heads (optional)

    Args:
        weights: ``(T, T)`` for one matrix or ``(h, T, T)`` for one panel per head.
        tokens: The token strings, used as row (query) and column (key) labels.
        caption: Caption shown under the figure.
        alt: Alt text describing what the figure shows.
        head_titles: One title per panel; defaults to ``"head 1"``, ``"head 2"``, ...
        decimals: Decimals printed in each cell; ``None`` prints none, for many tokens.

    Returns:
        An [AttentionFigure][attention_mechanisms.plotting.AttentionFigure]; a notebook shows
        it as an image.

    Raises:
        TypeError: If ``weights`` is not a floating-point tensor.
        ValueError: If ``weights`` is not ``(T, T)`` or ``(h, T, T)`` with ``T = len(tokens)``,
            ``head_titles`` has the wrong length, or ``alt`` is empty.
    """
    # A bare Figure, not pyplot: it draws off-screen and leaves the caller's backend alone.
    from matplotlib.figure import Figure

    weights = check_floating("weights", weights).detach().to("cpu", torch.float32)
    num_tokens = len(tokens)
    if weights.dim() not in (2, 3) or weights.shape[-2:] != (num_tokens, num_tokens):
        raise ValueError(
            f"weights must have shape ({num_tokens}, {num_tokens}) or "
            f"(num_heads, {num_tokens}, {num_tokens}) for {num_tokens} tokens; "
            f"got shape {tuple(weights.shape)}"
        )
    if weights.dim() == 2:
        weights = weights.unsqueeze(0)  # (1, T, T): one panel
    num_panels = weights.shape[0]
    if head_titles is None:
        head_titles = [f"head {i + 1}" for i in range(num_panels)] if num_panels > 1 else [""]
    if len(head_titles) != num_panels:
        raise ValueError(
            f"head_titles must have one title per panel ({num_panels}); got {len(head_titles)}"
        )
    if not alt.strip():
        raise ValueError("alt must describe the figure for readers who cannot see it; got ''")

    fig = Figure(figsize=(4.2 * num_panels, 4.0), layout="constrained")
    axes = fig.subplots(1, num_panels, squeeze=False)
    for ax, matrix, title in zip(axes[0], weights, head_titles, strict=True):
        image = ax.imshow(matrix.numpy(), cmap="Blues", vmin=0.0, vmax=max(1.0, matrix.max()))
        ax.set_xticks(range(num_tokens), tokens, rotation=45, ha="right")
        ax.set_yticks(range(num_tokens), tokens)
        ax.set_xlabel("key (attended to)")
        ax.set_ylabel("query (attending)")
        if title:
            ax.set_title(title)
        if decimals is not None:
            _annotate(ax, matrix, float(image.norm.vmax), decimals)
    return show_figure(fig, caption=caption, alt=alt)


def _annotate(ax: Axes, matrix: Tensor, vmax: float, decimals: int) -> None:
    """Write each cell's value on it, white on the dark cells."""
    for i, row in enumerate(matrix.tolist()):
        for j, value in enumerate(row):
            color = "white" if value > 0.6 * vmax else "black"
            ax.text(
                j, i, f"{value:.{decimals}f}", ha="center", va="center", color=color, fontsize=8
            )


def show_figure(fig: Figure, *, caption: str, alt: str) -> AttentionFigure:
    """Render any matplotlib figure as an image with alt text and a caption, and close it.

    Args:
        fig: A ``matplotlib.figure.Figure``.
        caption: Caption shown under the figure.
        alt: Alt text describing what the figure shows.

    Returns:
        An [AttentionFigure][attention_mechanisms.plotting.AttentionFigure].

    Raises:
        ValueError: If ``alt`` is empty.
    """
    if not alt.strip():
        raise ValueError("alt must describe the figure for readers who cannot see it; got ''")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    # Only pyplot keeps figures alive; if it was never imported, there is nothing to close.
    if (pyplot := sys.modules.get("matplotlib.pyplot")) is not None:
        pyplot.close(fig)
    return AttentionFigure(png=_palette(buffer.getvalue()), alt=alt, caption=caption)


def _palette(png: bytes) -> bytes:
    """The same picture in at most 256 colours: a third of the bytes for a plot, whose
    thousands of colours are mostly the blends at the edges of lines and letters."""
    from PIL import Image  # matplotlib's own dependency

    image = Image.open(io.BytesIO(png)).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(colors=256).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()
