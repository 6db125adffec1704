"""Attention mechanisms in PyTorch, written to be read.

One module per section of chapter 3 of *Build a Large Language Model (From Scratch)*, with
the book's class names, constructor signatures and parameter names; one per idea of the
attention in today's LLMs (grouped-query, sliding-window, rotary, latent, and gated and
linear attention), with the names and signatures of the book's bonus material; and a small
model trained to copy, to see what attention learns (`induction`).
"""

from .causal import CausalAttention
from .functional import causal_mask, scaled_dot_product_attention
from .fused import FusedMultiHeadAttention, KVCache
from .gated import GatedDeltaNet, GatedMultiHeadAttention
from .grouped_query import GroupedQueryAttention
from .induction import AttentionOnlyTransformer, train_induction
from .interpret import attention_patterns, copy_accuracy, head_scores, zero_heads
from .latent import MultiHeadLatentAttention
from .multihead import MultiHeadAttention, MultiHeadAttentionWrapper
from .positions import position_hide_mask
from .repeats import repeated_tokens
from .rope import apply_rope, compute_rope_params, interleaved_to_halves
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
from .sliding_window import MultiHeadAttentionWithSWA
from .tiled import tiled_attention

__all__ = [
    "AttentionOnlyTransformer",
    "CausalAttention",
    "FusedMultiHeadAttention",
    "GatedDeltaNet",
    "GatedMultiHeadAttention",
    "GroupedQueryAttention",
    "KVCache",
    "MultiHeadAttention",
    "MultiHeadAttentionWithSWA",
    "MultiHeadAttentionWrapper",
    "MultiHeadLatentAttention",
    "SelfAttention_v1",
    "SelfAttention_v2",
    "apply_rope",
    "attention_patterns",
    "attention_scores",
    "attention_scores_loop",
    "attention_weights",
    "causal_mask",
    "compute_rope_params",
    "context_vector",
    "context_vectors",
    "copy_accuracy",
    "head_scores",
    "interleaved_to_halves",
    "normalize_by_sum",
    "position_hide_mask",
    "query_scores",
    "query_scores_loop",
    "repeated_tokens",
    "scaled_dot_product_attention",
    "simplified_self_attention",
    "softmax_naive",
    "softmax_stable",
    "tiled_attention",
    "train_induction",
    "zero_heads",
]
__version__ = "0.1.0"
