# %% [markdown]
# # Multi-head latent attention
#
# Beyond the book. Grouped-query attention shrinks the KV cache by letting heads share keys
# and values. DeepSeek-V2 and V3 keep every head's keys and values distinct and compress
# them instead: each token is projected down to one small *latent* vector, only that vector
# is cached, and the keys and values of all heads are projected back up from it. This is
# multi-head latent attention (MLA). This page builds the class from `MultiHeadAttention`,
# shows that it is multi-head attention with keys and values of low rank, and measures its
# cache at a DeepSeek-V3-like size.

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

from attention_mechanisms import GroupedQueryAttention, MultiHeadAttention, MultiHeadLatentAttention
from attention_mechanisms.checks import (
    check_dropout,
    check_flag,
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
# ## Down to a latent, up to keys and values
#
# `MultiHeadAttention` computes keys and values with one projection each, $K = X W_k$ and
# $V = X W_v$, and a cache keeps both: $2 \, d_\text{out}$ numbers per token and layer.
# Multi-head latent attention puts a narrow projection in front of them. Each token is
# first mapped to a latent vector $c$ of $r$ numbers, `latent_dim`, and the keys and values
# of all heads are computed from $c$:
#
# $$
# c = X W_\text{DKV}, \qquad K = c \, W_\text{UK}, \qquad V = c \, W_\text{UV}
# $$
#
# Only $c$ is cached: $r$ numbers per token and layer instead of $2 \, d_\text{out}$, a
# ratio of $r / (2 \, d_\text{out})$. The price is recomputing the keys and values from every
# cached latent at each step. DeepSeek's models avoid that by folding $W_\text{UK}$ into the
# queries, which works only if the rotary position embeddings stay out of the way; how they
# manage both is the subject of a section below. Like the book's bonus code, this class
# keeps the core idea only.
#
# ## The class, as the lines that change
#
# [`MultiHeadLatentAttention`][attention_mechanisms.latent.MultiHeadLatentAttention]
# against chapter 3's `MultiHeadAttention` (the whole class is folded under the changes):

# %% include="attention_mechanisms.latent.MultiHeadLatentAttention" diff_from="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# What changed:
#
# - `latent_dim` replaces `context_length`; `None` picks `max(16, d_out // 8)`, as the
#   bonus code does.
# - `W_key` and `W_value` are gone. `W_DKV` maps each token down to `latent_dim` numbers,
#   and `W_UK` and `W_UV` map those up to `d_out` keys and values. They are created in the
#   bonus code's order, after `W_query`.
# - `forward` projects the queries as before and the new tokens' latent. With
#   `use_cache=True`, `_append` adds the latent to `cache_c_kv`, and the keys and values
#   are computed from the latents of **all** cached tokens.
# - `_split_heads` does the `view` and `transpose` of chapter 3 for the three of them, and
#   makes the result contiguous, as the bonus code does.
#
# ## On the book's six tokens
#
# With a latent of 2 numbers per token:

# %%
torch.manual_seed(123)
mla = MultiHeadLatentAttention(d_in=3, d_out=4, dropout=0.0, num_heads=2, latent_dim=2)
print("W_DKV:", tuple(mla.W_DKV.weight.shape), "W_UK:", tuple(mla.W_UK.weight.shape))
print(mla(batch)[0])
# Out:
# W_DKV: (2, 3) W_UK: (4, 2)
# tensor([[ 0.4039,  0.0445, -0.0764,  0.0309],
#         [ 0.4587,  0.1147, -0.0391, -0.0668],
#         [ 0.4730,  0.1361, -0.0267, -0.0944],
#         [ 0.4387,  0.1410, -0.0025, -0.0666],
#         [ 0.4297,  0.1453,  0.0071, -0.0614],
#         [ 0.4191,  0.1478,  0.0155, -0.0535]], grad_fn=<SelectBackward0>)

# %% [markdown]
# ## Multi-head attention with low-rank keys and values
#
# Without biases, $K = X W_\text{DKV} W_\text{UK}$: the product of two projections is one
# projection, $W_k = W_\text{DKV} W_\text{UK}$, of rank at most `latent_dim`. So a
# `MultiHeadAttention` given that product as `W_key` (and the same for the values) must
# compute the same function:

# %%
torch.manual_seed(0)
mla = MultiHeadLatentAttention(d_in=16, d_out=32, dropout=0.0, num_heads=4, latent_dim=6)
mha = MultiHeadAttention(d_in=16, d_out=32, context_length=10, dropout=0.0, num_heads=4)
with torch.no_grad():
    mha.W_query.weight.copy_(mla.W_query.weight)
    mha.W_key.weight.copy_(mla.W_UK.weight @ mla.W_DKV.weight)  # nn.Linear stores W^T
    mha.W_value.weight.copy_(mla.W_UV.weight @ mla.W_DKV.weight)
    mha.out_proj.load_state_dict(mla.out_proj.state_dict())
x = torch.randn(2, 10, 16)
print("same function:", (mla(x) - mha(x)).abs().max().item() < 1e-5)
print("rank of W_key:", torch.linalg.matrix_rank(mha.W_key.weight).item(), "of 16")
# Out:
# same function: True
# rank of W_key: 6 of 16

# %% [markdown]
# Latent attention is thus multi-head attention with a constraint, imposed from the start:
# the keys of every head are computed from the same 6 numbers per token, and so are the
# values.
#
# ## Generating with the latent cache
#
# Fed one token at a time with `use_cache=True`, the module must give what one pass over
# the whole input gives, while its cache holds latents only:

# %%
torch.manual_seed(1)
mla = MultiHeadLatentAttention(d_in=16, d_out=32, dropout=0.0, num_heads=4, latent_dim=6)
x = torch.randn(1, 12, 16)
with torch.no_grad():
    full = mla(x)
    mla.reset_cache()
    steps = [mla(x[:, i : i + 1], use_cache=True) for i in range(12)]
print("same as one pass:", torch.allclose(torch.cat(steps, dim=1), full, atol=1e-6))
print("cache:", tuple(mla.cache_c_kv.shape), "(b, tokens, latent_dim)")
# Out:
# same as one pass: True
# cache: (1, 12, 6) (b, tokens, latent_dim)

# %% [markdown]
# ## The cache, measured
#
# The ratio $r / (2 \, d_\text{out})$ can be read off the cache tensors themselves. Here a
# multi-head cache comes from `GroupedQueryAttention` with as many groups as heads (its
# `cache_k` and `cache_v`), beside the latent cache, after the same 12 tokens:

# %%
mha_like = GroupedQueryAttention(d_in=16, d_out=32, dropout=0.0, num_heads=4, num_kv_groups=4)
with torch.no_grad():
    mha_like(x, use_cache=True)
kv_numbers = mha_like.cache_k.numel() + mha_like.cache_v.numel()
print("multi-head cache:", kv_numbers, "numbers; latent cache:", mla.cache_c_kv.numel())
print("ratio:", mla.cache_c_kv.numel() / kv_numbers, "= latent_dim / (2 * d_out) =", 6 / 64)
# Out:
# multi-head cache: 768 numbers; latent cache: 72
# ratio: 0.09375 = latent_dim / (2 * d_out) = 0.09375

# %% [markdown]
# ## Folding the key projection into the queries
#
# Head $i$'s score for the query of a token $x_t$ and the latent $c_s$ of a cached token is
# $q_i^\top k_i = (W_{Q,i}\, x_t)^\top (W_{UK,i}\, c_s)$, which is
# $x_t^\top (W_{Q,i}^\top W_{UK,i})\, c_s$.
# The matrix in the middle does not depend on the tokens, so it can be computed once per
# head, and the queries can then be scored against the cached latents directly, without
# ever building the keys. With the class's own weights (no biases):

# %%
torch.manual_seed(4)
mla = MultiHeadLatentAttention(d_in=16, d_out=32, dropout=0.0, num_heads=4, latent_dim=8)
mla = mla.double()
x = torch.randn(1, 5, 16, dtype=torch.float64)
h, d = mla.num_heads, mla.head_dim
queries = mla.W_query(x).view(1, 5, h, d).transpose(1, 2)  # (b, h, T, d_head)
keys = mla.W_UK(mla.W_DKV(x)).view(1, 5, h, d).transpose(1, 2)  # (b, h, T, d_head)
scores = queries @ keys.transpose(2, 3)  # (b, h, T, T): what forward computes

latent = mla.W_DKV(x)  # (b, T, r): what the cache holds
w_q = mla.W_query.weight.view(h, d, 16)  # (h, d_head, d_in)
w_uk = mla.W_UK.weight.view(h, d, 8)  # (h, d_head, r)
folded = w_q.transpose(1, 2) @ w_uk  # (h, d_in, r): once per head, before any token
scores_folded = (x.unsqueeze(1) @ folded) @ latent.unsqueeze(1).transpose(2, 3)  # (b, h, T, T)
print("same scores without keys:", torch.allclose(scores, scores_folded))
# Out:
# same scores without keys: True

# %% [markdown]
# ## Why DeepSeek adds one shared rotary key
#
# Rotary position embeddings ([the previous chapter](rotary-position-embeddings.py)) turn
# each query and key by its position: the score becomes
# $x_t^\top W_{Q,i}^\top R_t^\top R_s W_{UK,i}\, c_s$, and $R_t^\top R_s$ sits between the
# two matrices and changes with every pair of positions. No single matrix can be computed
# in advance any more; the keys would have to be rebuilt from every cached latent at every
# step, which is what folding was meant to avoid (DeepSeek-V2 paper, section 2.1.3).
#
# DeepSeek-V2 and V3 therefore keep position out of the compressed part and carry it on a
# few extra features:
#
# - each head gets 64 more query features, computed from the compressed query and rotated;
# - each token gets **one** rotated key of 64 features, computed from the token itself and
#   **shared by all heads**;
# - head $i$'s key is its own unrotated key from the latent followed by the shared rotated
#   key, so its score is the folded score plus the score of the rotated parts.
#
# The shared rotated key must be cached too, beside the latent: 512 + 64 = 576 numbers per
# token and layer in DeepSeek-V3. Had each of the 128 heads kept its own 64 rotated
# features, the cache would have grown by $128 \times 64$ numbers instead of 64, and
# most of what the latent saves would be gone. The class here, like the book's bonus code,
# has no position embedding and no rotated key.
#
# ## At a published size
#
# DeepSeek-V3 has 61 layers and 128 heads of 128 features, a latent of 512 numbers per
# token (`kv_lora_rank`), and a context of 128K (131,072) tokens (the DeepSeek-V3
# technical report, DeepSeek-AI, 2024; and the model's `config.json`: `num_hidden_layers`
# 61, `num_attention_heads` 128, `kv_lora_rank` 512, `v_head_dim` 128). The real model also
# caches its shared rotated key, 64 numbers per token, which this class does not have; the
# table is for the class at that size, in bfloat16, built on the `meta` device (shapes and
# dtypes, no data).


# %%
def cache_bytes(module, num_tokens, d_in):
    """Bytes of the cache that module keeps after reading num_tokens tokens."""
    module.reset_cache()
    with torch.no_grad():
        x = torch.empty(1, num_tokens, d_in, device="meta", dtype=torch.bfloat16)
        module(x, use_cache=True)
    return sum(buffer.nbytes for buffer in module.buffers())


with torch.device("meta"):
    latent_layer = MultiHeadLatentAttention(7168, 16384, 0.0, 128, latent_dim=512)
    multi_head_layer = GroupedQueryAttention(7168, 16384, 0.0, 128, num_kv_groups=128)
latent_layer.to(torch.bfloat16)
multi_head_layer.to(torch.bfloat16)

layers = 61
print(f"{'':<26}{'per token':>12}{'131,072 tokens':>17}")
for label, layer in [("multi-head keys, values", multi_head_layer), ("latent, 512", latent_layer)]:
    per_token = layers * cache_bytes(layer, 1, 7168)
    full = layers * cache_bytes(layer, 131072, 7168)
    print(f"{label:<26}{per_token / 2**10:>8.1f} KiB{full / 2**30:>13.2f} GiB")
# Out:
#                              per token   131,072 tokens
# multi-head keys, values     3904.0 KiB       488.00 GiB
# latent, 512                   61.0 KiB         7.62 GiB

# %% [markdown]
# At this size the latent cache is $512 / (2 \times 16384) = 1/64$ of a multi-head one.
# Counting its 64 rotated key features too, DeepSeek-V3 caches 576 numbers per token and
# layer instead of 512: 1/57 of the multi-head cache of this table.

# %%
lengths = [1024, 4096, 16384, 65536, 131072]
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for label, layer in [("multi-head keys, values", multi_head_layer), ("latent, 512", latent_layer)]:
    sizes = [layers * cache_bytes(layer, t, 7168) / 2**30 for t in lengths]
    ax.plot(lengths, sizes, marker="o", label=label)
ax.set(xscale="log", yscale="log", xlabel="tokens in the cache", ylabel="GiB, 61 layers")
ax.set_xticks(lengths, [f"{t:,}" for t in lengths])
ax.minorticks_off()
ax.legend()
show_figure(
    fig,
    caption=(
        "Figure 1. KV-cache size of a DeepSeek-V3-like model for one sequence, from the "
        "cache tensors of MultiHeadLatentAttention and of a multi-head cache."
    ),
    alt=(
        "A log-log line chart of cache size in GiB against tokens in the cache, from 1,024 "
        "to 131,072. Two parallel straight lines; the latent cache is 64 times lower than "
        "the multi-head one at every length."
    ),
)
# Out:
# AttentionFigure('Figure 1. KV-cache size of a DeepSeek-V3-like model for one sequence, from the cache tensors of MultiHeadLatentAttention and of a multi-head cache.')

# %% [markdown]
# ## What it costs in quality
#
# DeepSeek compared the two directly, training the same models with multi-head and with
# latent attention (DeepSeek-V2 paper, DeepSeek-AI, 2024):
#
# - **The cache** (Table 1): per token, $(d_c + d_h^R)\,l$ numbers for $l$ layers, where
#   $d_c$ is the latent and $d_h^R$ the shared rotated key; with DeepSeek-V2's sizes about
#   $\tfrac{9}{2} d_h l$, the cache of grouped-query attention with only 2.25 groups.
# - **The quality** (appendix D.2, Table 9): a mixture-of-experts model of about 16B
#   parameters kept 15.6K numbers per token in its cache instead of 110.6K and scored 50.0
#   on MMLU instead of 48.7; at about 250B parameters, 34.6K instead of 860.2K, and 59.0
#   instead of 57.5. One of the four benchmarks went the other way (C-Eval, 50.9 against
#   51.6 for the small model).
# - **Against sharing** (appendix D.1, Table 8): in dense 7B models, grouped-query and
#   multi-query attention lost 4 and 7 points of MMLU to multi-head attention
#   ([Grouped-query attention](grouped-query-attention.py)); latent attention is DeepSeek's
#   way to shrink the cache without that loss.
#
# What latent attention costs instead is arithmetic and complexity: the up-projections or
# the folded matrices at every step, and the separate rotated key.
#
# ## Exercises
#
# Written your own `MultiHeadLatentAttention`? `attention-check` compares it with this
# page's class holding your weights, taken by name or read by their shapes, and checks that
# it is causal ([Check your code](../chapter-3/check-your-code.py)).
#
# ### Exercise 1: The same cache as grouped-query attention
#
# A grouped-query layer with $g$ key-value heads of size $d_\text{head}$ caches
# $2 g \, d_\text{head}$ numbers per token. For the Llama 3 8B shape (32 heads of 128, 8
# key-value heads), which `latent_dim` gives a latent cache of the same size? Check it with
# the two modules.

# %% tags=["solution"]
latent_dim = 2 * 8 * 128
with torch.device("meta"):
    gqa_layer = GroupedQueryAttention(4096, 4096, 0.0, 32, num_kv_groups=8)
    mla_layer = MultiHeadLatentAttention(4096, 4096, 0.0, 32, latent_dim=latent_dim)
gqa_layer.to(torch.bfloat16)
mla_layer.to(torch.bfloat16)
print(latent_dim, cache_bytes(gqa_layer, 100, 4096) == cache_bytes(mla_layer, 100, 4096))
# Out:
# 2048 True

# %% [markdown] tags=["solution"]
# A latent of $2 \times 8 \times 128 = 2048$ numbers caches as much as 8 key-value heads.
# The difference is in what the budget buys: grouped-query attention shares 8 heads' keys
# among 32 query heads, while latent attention gives all 32 heads their own keys, computed
# from a shared 2048-number summary.

# %% [markdown]
# ### Exercise 2: Parameters
#
# At GPT-2 small's size (768 features, 12 heads), compare the parameters of
# `MultiHeadAttention` and of `MultiHeadLatentAttention` with its default latent.

# %% tags=["solution"]
mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
mla = MultiHeadLatentAttention(768, 768, dropout=0.0, num_heads=12)
print("latent_dim:", mla.latent_dim)
for name, module in [("MultiHeadAttention", mha), ("MultiHeadLatentAttention", mla)]:
    print(f"{name:<26}{sum(p.numel() for p in module.parameters()):>10,}")
# Out:
# latent_dim: 96
# MultiHeadAttention         2,360,064
# MultiHeadLatentAttention   1,401,600

# %% [markdown] tags=["solution"]
# The default latent is $768 / 8 = 96$ numbers. `W_key` and `W_value`
# ($2 \times 768 \times 768$ weights) become `W_DKV` ($96 \times 768$) and `W_UK` and
# `W_UV` ($2 \times 768 \times 96$): fewer parameters as well as a smaller cache.
