# %% [markdown]
# # Grouped-query attention
#
# Beyond the book. Chapter 3 ends with GPT-2's multi-head attention, where every head has
# its own queries, keys and values. Llama 3, Mistral, Qwen and Gemma keep many query heads
# but let them share a few key and value heads: *grouped-query attention* (GQA, Ainslie et
# al., 2023). What shrinks is the KV cache, the keys and values a model keeps while it
# generates text, by the number of query heads that share each key-value head: four in
# Llama 3 8B (32 query heads over 8 key-value heads), two in Gemma 3 27B (32 over 16, see
# [Sliding-window attention](sliding-window-attention.py)). The weights shrink only a
# little: those of Llama 3 8B take about 15 GiB, against 1 GiB of cache for one sequence of
# 8,192 tokens (measured below). This page builds the class from `MultiHeadAttention`,
# checks it against PyTorch, and measures what it saves.

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from attention_mechanisms import GroupedQueryAttention, MultiHeadAttention
from attention_mechanisms.checks import (
    check_dropout,
    check_flag,
    check_groups,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)
from attention_mechanisms.plotting import show_figure
from attention_mechanisms.positions import append_to_cache, position_hide_mask

inputs = torch.tensor(
    [
        [0.43, 0.15, 0.89],  # Your
        [0.55, 0.87, 0.66],  # journey
        [0.57, 0.85, 0.64],  # starts
        [0.22, 0.58, 0.33],  # with
        [0.77, 0.25, 0.10],  # one
        [0.05, 0.80, 0.55],  # step
    ]
)
batch = torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)

# %% [markdown]
# ## Why share keys and values
#
# A model that generates text keeps the keys and values of every token it has seen, so that
# each new token costs one query against them instead of a pass over the whole text: the
# KV cache of [Making attention fast](../fast/making-attention-fast.py). Per token and per
# layer, multi-head attention caches one key and one value of `head_dim` numbers for each
# of its $h$ heads: $2 h \, d_\text{head}$ numbers. It grows with every token of every
# sequence in the batch, and over long contexts or large batches it outgrows the weights
# themselves (measured below).
#
# Grouped-query attention keeps the $h$ query heads and computes only $g$ key heads and
# $g$ value heads, with $g$ dividing $h$. The query heads form $g$ groups of
# $h / g$ neighbours, and every head of a group uses its group's key and value head:
#
# $$
# \operatorname{head}_i = \operatorname{softmax}\!\left(
#     \frac{Q_i K_{\lceil i g / h \rceil}^\top}{\sqrt{d_\text{head}}} + M\right)
#     V_{\lceil i g / h \rceil}, \qquad i = 1, \dots, h
# $$
#
# The cache shrinks to $g / h$ of its size. With $g = h$ this is multi-head attention
# again; with $g = 1$, all heads share one key and one value head, which has its own name:
# multi-query attention.
#
# ## The class, as the lines that change
#
# Below are the lines of
# [`GroupedQueryAttention`][attention_mechanisms.grouped_query.GroupedQueryAttention] that
# differ from chapter 3's `MultiHeadAttention`, as the package ships them (the whole class
# is folded under the changes):

# %% include="attention_mechanisms.grouped_query.GroupedQueryAttention" diff_from="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# What changed, from the top:
#
# - The signature has `num_kv_groups` and no `context_length`: there is no mask buffer,
#   because with a cache the queries no longer start at position 0, so the mask is built
#   from positions in every call.
# - `W_key` and `W_value` project to `num_kv_groups * head_dim` features instead of
#   `d_out`, and they are created first, then `W_query` and `out_proj`, which has no bias.
#   That is the order and the layout of the book's bonus code, so the same seed gives the
#   same parameters.
# - `cache_k`, `cache_v` and `ptr_current_pos` hold the cache and the position of the next
#   token; `reset_cache()` empties them.
# - In `forward`, the keys and values are split into `num_kv_groups` heads, not
#   `num_heads`. With `use_cache=True`, `_append` adds them to the cache, and the scores
#   use every cached token.
# - `repeat_interleave(self.group_size, dim=1)` then copies each key and value head for the
#   `group_size` query heads of its group: `[K1, K2]` becomes `[K1, K1, K2, K2]`. From
#   there on, every line is `MultiHeadAttention`'s.
# - The causal mask compares positions: a query at position `start + i` hides every key
#   after it.
#
# ## On the book's six tokens
#
# Four query heads of size 2 sharing two key-value heads, on the batch of chapter 3:

# %%
torch.manual_seed(123)
gqa = GroupedQueryAttention(d_in=3, d_out=8, dropout=0.0, num_heads=4, num_kv_groups=2)
print("W_query:", tuple(gqa.W_query.weight.shape), "W_key:", tuple(gqa.W_key.weight.shape))
context_vecs = gqa(batch)
print(context_vecs.shape)
print(context_vecs[0])
# Out:
# W_query: (8, 3) W_key: (4, 3)
# torch.Size([2, 6, 8])
# tensor([[-0.2303,  0.0307,  0.3000, -0.0278, -0.1558,  0.2939, -0.4175,  0.1149],
#         [-0.3427,  0.0483,  0.3313,  0.0425, -0.1859,  0.2244, -0.5244,  0.0821],
#         [-0.3820,  0.0559,  0.3415,  0.0669, -0.1948,  0.1982, -0.5618,  0.0683],
#         [-0.3526,  0.0524,  0.3047,  0.0697, -0.1790,  0.1625, -0.5090,  0.0562],
#         [-0.3393,  0.0666,  0.2795,  0.0685, -0.1592,  0.1383, -0.4904,  0.0349],
#         [-0.3328,  0.0557,  0.2731,  0.0730, -0.1625,  0.1317, -0.4742,  0.0408]],
#        grad_fn=<SelectBackward0>)

# %% [markdown]
# The key projection has half the rows of the query projection: two key heads of size 2
# instead of four. The output has the shape of `MultiHeadAttention`'s.
#
# ## Checked against PyTorch
#
# Since version 2.5, PyTorch's `scaled_dot_product_attention` takes fewer key and value
# heads than query heads itself, with `enable_gqa=True`. Given the same projections, it
# must agree with the class:

# %%
torch.manual_seed(0)
gqa = GroupedQueryAttention(d_in=16, d_out=32, dropout=0.0, num_heads=8, num_kv_groups=2)
x = torch.randn(2, 10, 16)
b, t, _ = x.shape
q = gqa.W_query(x).view(b, t, 8, 4).transpose(1, 2)  # (b, 8 heads, t, 4)
k = gqa.W_key(x).view(b, t, 2, 4).transpose(1, 2)  # (b, 2 heads, t, 4)
v = gqa.W_value(x).view(b, t, 2, 4).transpose(1, 2)
context = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
expected = gqa.out_proj(context.transpose(1, 2).reshape(b, t, 32))
print("agrees to 1e-6:", (gqa(x) - expected).abs().max().item() < 1e-6)
# Out:
# agrees to 1e-6: True

# %% [markdown]
# And with as many groups as heads, it is `MultiHeadAttention`: copy the weights across
# (the bonus code's `out_proj` has no bias, so the book's bias is set to zero) and the
# outputs agree bit for bit:

# %%
torch.manual_seed(123)
as_mha = GroupedQueryAttention(d_in=3, d_out=4, dropout=0.0, num_heads=2, num_kv_groups=2)
mha = MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)
with torch.no_grad():
    for name in ("W_query", "W_key", "W_value", "out_proj"):
        getattr(mha, name).weight.copy_(getattr(as_mha, name).weight)
    mha.out_proj.bias.zero_()
print("bit for bit:", torch.equal(as_mha(batch), mha(batch)))
# Out:
# bit for bit: True

# %% [markdown]
# ## Generating with the cache
#
# With `use_cache=True`, each call appends its tokens' keys and values to the cache and
# attends to everything cached. Feeding a sequence one token at a time must then give what
# one pass over the whole sequence gives:

# %%
torch.manual_seed(1)
gqa = GroupedQueryAttention(d_in=16, d_out=32, dropout=0.0, num_heads=8, num_kv_groups=2)
x = torch.randn(1, 12, 16)
with torch.no_grad():
    full = gqa(x)
    gqa.reset_cache()
    steps = [gqa(x[:, i : i + 1], use_cache=True) for i in range(12)]
print("same as one pass:", torch.allclose(torch.cat(steps, dim=1), full, atol=1e-6))
print("cached keys:", tuple(gqa.cache_k.shape), "(b, num_kv_groups, tokens, head_dim)")
# Out:
# same as one pass: True
# cached keys: (1, 2, 12, 4) (b, num_kv_groups, tokens, head_dim)

# %% [markdown]
# The cache holds 2 key heads, not 8: it is a quarter of a multi-head cache.
#
# ## What it saves, at a published size
#
# Llama 3 8B has 32 layers, each with 32 query heads of 128 features and 8 key-value
# heads, kept in bfloat16 (2 bytes a number), with a context of 8,192 tokens (Meta's
# `config.json` for Meta-Llama-3-8B: `num_hidden_layers` 32, `num_attention_heads` 32,
# `num_key_value_heads` 8, `hidden_size` 4096, `max_position_embeddings` 8192).
# The numbers below are the sizes of the cache tensors that one such layer keeps, built on
# PyTorch's `meta` device: tensors with shapes and dtypes but no data, so nothing is
# computed, yet every shape is the one the class produces.


# %%
def cache_bytes(module, num_tokens, d_in):
    """Bytes of the cache that module keeps after reading num_tokens tokens."""
    module.reset_cache()
    with torch.no_grad():
        x = torch.empty(1, num_tokens, d_in, device="meta", dtype=torch.bfloat16)
        module(x, use_cache=True)
    return sum(buffer.nbytes for buffer in module.buffers())


def llama3_8b_layer(num_kv_groups):
    with torch.device("meta"):
        return GroupedQueryAttention(4096, 4096, 0.0, 32, num_kv_groups, dtype=torch.bfloat16)


layers, context = 32, 8192
print(f"{'key-value heads':<22}{'per token':>12}{'8,192 tokens':>15}")
for label, groups in [("32 (multi-head)", 32), ("8 (Llama 3 8B)", 8), ("1 (multi-query)", 1)]:
    per_token = layers * cache_bytes(llama3_8b_layer(groups), 1, 4096)
    full = layers * cache_bytes(llama3_8b_layer(groups), context, 4096)
    print(f"{label:<22}{per_token / 2**10:>8.0f} KiB{full / 2**30:>11.3f} GiB")
# Out:
# key-value heads          per token   8,192 tokens
# 32 (multi-head)            512 KiB      4.000 GiB
# 8 (Llama 3 8B)             128 KiB      1.000 GiB
# 1 (multi-query)             16 KiB      0.125 GiB

# %% [markdown]
# For one sequence of 8,192 tokens, grouped-query attention keeps 1 GiB where multi-head
# attention would keep 4 GiB, and a batch of sequences multiplies both.
#
# ## The cache beside the weights
#
# Whether the cache matters depends on how much text is held at once. The whole model's
# weights are counted here on the `meta` device from the same `config.json` (a vocabulary
# of 128,256 tokens, `intermediate_size` 14336 for the three feed-forward matrices, two
# norms per layer and one at the end, and an output layer that is not tied to the
# embedding), with the attention layers built by `GroupedQueryAttention` itself. Llama 3.1
# 8B has the same shape with a context of 131,072 tokens.


# %%
def llama3_8b_weight_bytes(num_kv_groups):
    with torch.device("meta"):
        per_layer = [
            llama3_8b_layer(num_kv_groups),
            nn.Linear(4096, 14336, bias=False),  # the feed-forward's three matrices
            nn.Linear(4096, 14336, bias=False),
            nn.Linear(14336, 4096, bias=False),
            nn.RMSNorm(4096),
            nn.RMSNorm(4096),
        ]
        ends = [nn.Embedding(128256, 4096), nn.RMSNorm(4096), nn.Linear(4096, 128256, bias=False)]
    numbers = layers * sum(p.numel() for m in per_layer for p in m.parameters())
    numbers += sum(p.numel() for m in ends for p in m.parameters())
    return 2 * numbers  # bfloat16: 2 bytes a number


print(f"{'':<26}{'8 key-value heads':>18}{'32 (multi-head)':>17}")
print(
    f"{'weights':<26}{llama3_8b_weight_bytes(8) / 2**30:>14.1f} GiB"
    f"{llama3_8b_weight_bytes(32) / 2**30:>13.1f} GiB"
)
for tokens, batch_size in [(8192, 1), (8192, 16), (131072, 1), (131072, 8)]:
    label = f"cache, {batch_size} x {tokens:,} tokens"
    gqa_cache = batch_size * layers * cache_bytes(llama3_8b_layer(8), tokens, 4096)
    mha_cache = batch_size * layers * cache_bytes(llama3_8b_layer(32), tokens, 4096)
    print(f"{label:<26}{gqa_cache / 2**30:>14.1f} GiB{mha_cache / 2**30:>13.1f} GiB")
# Out:
#                            8 key-value heads  32 (multi-head)
# weights                             15.0 GiB         16.5 GiB
# cache, 1 x 8,192 tokens              1.0 GiB          4.0 GiB
# cache, 16 x 8,192 tokens            16.0 GiB         64.0 GiB
# cache, 1 x 131,072 tokens           16.0 GiB         64.0 GiB
# cache, 8 x 131,072 tokens          128.0 GiB        512.0 GiB

# %% [markdown]
# For one sequence of 8,192 tokens the weights are about fifteen times the grouped cache,
# and what grouping saves is small beside them. Long contexts and large batches make the
# cache the larger of the two, and there grouping decides whether the text fits: at
# 131,072 tokens a single multi-head sequence would need about four times the memory of
# the weights. (Grouping also shrinks the weights a little: only `W_key` and `W_value` get
# smaller.)
#
# The figure below measures the cache of one sequence as the context grows.

# %%
lengths = [1024, 2048, 4096, 8192, 16384, 32768]
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for label, groups in [("multi-head, 32", 32), ("grouped-query, 8", 8), ("multi-query, 1", 1)]:
    sizes = [layers * cache_bytes(llama3_8b_layer(groups), t, 4096) / 2**30 for t in lengths]
    ax.plot(lengths, sizes, marker="o", label=f"{label} key-value heads")
ax.set(xscale="log", yscale="log", xlabel="tokens in the cache", ylabel="GiB, 32 layers")
ax.set_xticks(lengths, [f"{t:,}" for t in lengths])
ax.minorticks_off()
ax.legend()
show_figure(
    fig,
    caption=(
        "Figure 1. KV-cache size of a Llama 3 8B-like model for one sequence, from the "
        "cache tensors of GroupedQueryAttention."
    ),
    alt=(
        "A log-log line chart of cache size in GiB against tokens in the cache, from 1,024 "
        "to 32,768. Three parallel straight lines: 32 key-value heads on top, 8 key-value "
        "heads four times lower, 1 key-value head 32 times lower than the top one."
    ),
)
# Out:
# AttentionFigure('Figure 1. KV-cache size of a Llama 3 8B-like model for one sequence, from the cache tensors of GroupedQueryAttention.')

# %% [markdown]
# All three lines grow linearly with the context; grouping moves the line down by the
# factor $g / h$ and changes nothing else.
#
# ## Memory saved is not yet speed gained
#
# Generating a token reads the whole cache from memory, and for long texts that reading,
# more than the arithmetic, sets the pace. This class stores the grouped cache, but each
# cached step copies it out with `repeat_interleave` to one key and one value head per
# query head, and attends to the copy. Here is that copy for one Llama 3 8B layer after
# 8,192 tokens, again on the `meta` device:

# %%
layer = llama3_8b_layer(8)
cache_bytes(layer, 8192, 4096)
copied = layer.cache_k.repeat_interleave(layer.group_size, dim=1)  # what forward attends to
print("cached keys:", tuple(layer.cache_k.shape), f"{layer.cache_k.nbytes / 2**20:.0f} MiB")
print("keys attended to:", tuple(copied.shape), f"{copied.nbytes / 2**20:.0f} MiB")
# Out:
# cached keys: (1, 8, 8192, 128) 16 MiB
# keys attended to: (1, 32, 8192, 128) 64 MiB

# %% [markdown]
# Each step therefore reads and writes as much as multi-head attention would, on top of
# the smaller cache. The speed that grouped-query attention is known for comes from kernels
# that let the query heads of a group read their shared key and value head where it lies:
# FlashAttention-2 accepts keys and values with fewer heads than the queries, and PyTorch's
# `F.scaled_dot_product_attention` takes `enable_gqa=True`, as in the check above.
#
# ## What it costs in quality
#
# Fewer key and value heads give each query less to choose from. How much that costs has
# been measured on the same model built both ways:
#
# - **Multi-query attention** (Shazeer, 2019, Table 1): on WMT14 English to German, one
#   key-value head instead of 8 lowered the development BLEU from 26.7 to 26.5, while the
#   decoder's time per generated token fell from 46 to 3.8 µs (Table 2, on a TPUv2).
# - **The GQA paper** (Ainslie et al., 2023, Table 1): T5-XXL, converted with 5% of its
#   pre-training compute. Averaged over summarization, translation and question answering,
#   multi-head scored 47.2 at 1.51 s per sample, 8 groups 47.1 at 0.28 s, and multi-query
#   46.6 at 0.24 s.
# - **Llama 2** (Touvron et al., 2023, appendix A.2.1, Table 18): 30B models trained on 150B
#   tokens, with wider feed-forward layers to keep the parameter count. Grouped-query
#   attention was close to multi-head on most tasks and better than multi-query on
#   average. On TriviaQA (zero-shot, exact match), for example, multi-head scored 44.7,
#   grouped 46.2 and multi-query 42.8: on a single task grouping can even come out ahead.
#   The table's MMLU scores (26.5 to 28.0) show nothing either way: MMLU has four choices
#   per question, so guessing scores 25%, and these models are barely above it.
# - **DeepSeek-V2** (DeepSeek-AI, 2024, appendix D.1, Table 8): dense 7B models trained on
#   1.33T tokens. Here the gap was larger: MMLU 45.2 with multi-head attention, 41.2 with 8
#   groups, 37.9 with multi-query. That gap led DeepSeek to
#   [latent attention](latent-attention.py).
#
# So grouping trades a small, measurable loss for a cache $h / g$ times smaller; the
# fewer the groups, the larger the loss.
#
# ## Exercises
#
# Written your own `GroupedQueryAttention`? `attention-check` builds it with this page's
# arguments, compares it with this page's class holding your weights, and checks that it
# is causal and shares each key-value head with its consecutive query heads, as
# `repeat_interleave` does ([Check your code](../chapter-3/check-your-code.py)).
#
# ### Exercise 1: Count the parameters
#
# How many parameters does one attention layer of the Llama 3 8B shape have with 8
# key-value heads, and how many with 32? Compute it from the module.

# %% tags=["solution"]
for groups in (32, 8):
    layer = llama3_8b_layer(groups)
    print(f"{groups:>2} key-value heads: {sum(p.numel() for p in layer.parameters()):,}")
# Out:
# 32 key-value heads: 67,108,864
#  8 key-value heads: 41,943,040

# %% [markdown] tags=["solution"]
# `W_query` and `out_proj` have $4096 \times 4096$ weights each in both cases. `W_key` and
# `W_value` go from $4096 \times 4096$ each to $1024 \times 4096$ each: the layer loses
# 37.5% of its attention weights, while its cache loses 75%.

# %% [markdown]
# ### Exercise 2: Which heads share a key?
#
# With 6 query heads and 2 key-value heads, which query heads use key-value head 1? Check
# your answer with the module itself: change the weights of value head 1 only, and see
# which heads' context vectors change.

# %% tags=["solution"]
torch.manual_seed(2)
gqa = GroupedQueryAttention(d_in=4, d_out=12, dropout=0.0, num_heads=6, num_kv_groups=2)
x = torch.randn(1, 3, 4)
seen = {}  # what out_proj receives: the heads' context vectors side by side
gqa.out_proj.register_forward_hook(lambda module, args, out: seen.update(heads=args[0]))
gqa(x)
before = seen["heads"].view(1, 3, 6, 2)  # (b, tokens, 6 heads, head_dim)
with torch.no_grad():
    gqa.W_value.weight[:2] += 1.0  # the rows of value head 1
gqa(x)
after = seen["heads"].view(1, 3, 6, 2)
print([h + 1 for h in range(6) if not torch.equal(before[:, :, h], after[:, :, h])])
# Out:
# [1, 2, 3]

# %% [markdown] tags=["solution"]
# Query heads 1, 2 and 3 (the first group) use key head 1, and heads 4 to 6 use key head
# 2: groups are runs of neighbouring heads, which is what `repeat_interleave` builds.
