"""Attention mechanisms in PyTorch, written to be read.

One module per section of chapter 3 of *Build a Large Language Model (From Scratch)*, with
the book's class names, constructor signatures and parameter names.
"""

from .causal import CausalAttention
from .functional import causal_mask, scaled_dot_product_attention
from .fused import FusedMultiHeadAttention, KVCache
from .multihead import MultiHeadAttention, MultiHeadAttentionWrapper
from .self_attention import SelfAttention_v1, SelfAttention_v2
from .simple import (
    attention_scores,
    attention_scores_loop,
    attention_weights,
    context_vector,
    context_vectors,
    normalize_by_sum,
    query_scores,
    query_scores_loop,
    simplified_self_attention,
    softmax_naive,
    softmax_stable,
)
from .tiled import tiled_attention

__all__ = [
    "CausalAttention",
    "FusedMultiHeadAttention",
    "KVCache",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SelfAttention_v1",
    "SelfAttention_v2",
    "attention_scores",
    "attention_scores_loop",
    "attention_weights",
    "causal_mask",
    "context_vector",
    "context_vectors",
    "normalize_by_sum",
    "query_scores",
    "query_scores_loop",
    "scaled_dot_product_attention",
    "simplified_self_attention",
    "softmax_naive",
    "softmax_stable",
    "tiled_attention",
]
__version__ = "0.1.0"
