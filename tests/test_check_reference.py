"""attention-check's reference: the book's computation from a class's weights equals the
package's class, for every role and at the checker's shapes."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms import (
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
)
from attention_mechanisms.check.probes import PROBES
from attention_mechanisms.check.reference import BOOK, VARIANTS, book_forward
from attention_mechanisms.check.weights import candidates

CLASSES = {
    "SelfAttention_v1": (SelfAttention_v1, ("d_in", "d_out")),
    "SelfAttention_v2": (SelfAttention_v2, ("d_in", "d_out", "qkv_bias")),
    "CausalAttention": (
        CausalAttention, ("d_in", "d_out", "context_length", "dropout", "qkv_bias"),
    ),
    "MultiHeadAttentionWrapper": (
        MultiHeadAttentionWrapper,
        ("d_in", "d_out", "context_length", "dropout", "num_heads", "qkv_bias"),
    ),
    "MultiHeadAttention": (
        MultiHeadAttention,
        ("d_in", "d_out", "context_length", "dropout", "num_heads", "qkv_bias"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("role", CLASSES)
@pytest.mark.parametrize("bias", [False, True])
def test_the_book_variant_is_the_packages_class_at_every_probe(role, bias):
    cls, names = CLASSES[role]
    for probe in PROBES[role]:
        values = {**probe.values(), "qkv_bias": bias}
        torch.manual_seed(123)
        module = cls(**{name: values[name] for name in names}).eval()
        x = probe.inputs()
        mapping = next(candidates(module, role, probe.d_in, probe.d_out, probe.num_heads))
        with torch.no_grad():
            expected = module(x)
        torch.testing.assert_close(book_forward(role, mapping, x, BOOK), expected)


def test_every_variant_differs_from_the_book_somewhere():
    """A variant equal to the book's at every probe could never name a cause."""
    torch.manual_seed(123)
    module = MultiHeadAttention(5, 6, 7, 0.0, 3).eval()
    x = torch.rand(2, 5, 5, generator=torch.Generator().manual_seed(0))
    mapping = next(candidates(module, "MultiHeadAttention", 5, 6, 3))
    book = book_forward("MultiHeadAttention", mapping, x, BOOK)
    for variants in VARIANTS.values():
        for variant in variants:
            other = book_forward("MultiHeadAttention", mapping, x, variant)
            assert not torch.allclose(other, book, equal_nan=True), variant
