# %% [markdown]
# # Multi-head latent attention
#
# Beyond the book. Grouped-query attention shrinks the KV cache by letting heads share keys
# and values. DeepSeek-V2 and V3 keep every head's keys and values distinct and compress
# them instead: each token is projected down to one small *latent* vector, only that vector
# is cached, and the keys and values of all heads are projected back up from it. This is
# multi-head latent attention (MLA). This page builds the class from `MultiHeadAttention`,
# shows that it is multi-head attention with keys and values of low rank, derives how
# DeepSeek attends to the latents without rebuilding any key or value, measures the cache at
# a DeepSeek-V3-like size, and weighs reading against arithmetic at DeepSeek-V2's.

# %%
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
# ratio of $r / (2 \, d_\text{out})$. Computed as written, each step rebuilds the keys and
# values of every cached token from its latent: $2 \, r \, d_\text{out}$ multiply-adds per
# cached token and layer, $r$ times the $2 \, d_\text{out}$ of the attention itself.
# DeepSeek's models do not rebuild them. They absorb $W_\text{UK}$ into the queries and
# $W_\text{UV}$ into the output projection, and attend to the cached latents themselves
# (DeepSeek-V2 paper, DeepSeek-AI, 2024, section 2.1.2 and appendix C). That works only if
# the rotary position embeddings stay out of the way; the sections below derive both folds
# and show how DeepSeek keeps position apart. Like the book's bonus code, this class keeps
# the core idea only, with the absorbed computation as an option.
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
# - `absorb`, off by default, chooses how the attention is computed; the parameters and
#   the cache are the same either way. With `absorb=True`, `forward` hands the queries and
#   the latents to `_absorbed`, which builds no key and no value: it maps each head's query
#   into the latent space with that head's slice of `W_UK`, scores it against the latents,
#   and maps the weighted sum of latents up with `W_UV` just before `out_proj` (section
#   "Absorbing both projections" below).
# - With `qkv_bias=True`, the bias of `W_UK` adds the same number to every score of a
#   query; softmax ignores it, so `_absorbed` leaves it out. The bias of `W_UV` is added
#   back, times the sum of the attention weights (1, except under dropout in training).
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
# ## Absorbing both projections
#
# The fold above multiplies $W_{Q,i}^\top W_{UK,i}$ in advance. The same algebra can be read
# in another order, and it holds for the values as well. For head $i$, its query $q_i$ and
# the latent $c_s$ of a cached token:
#
# $$
# q_i^\top k_{i,s} = q_i^\top (W_{UK,i}\, c_s) = (W_{UK,i}^\top q_i)^\top c_s
# $$
#
# $W_{UK,i}^\top q_i$ is the query mapped into the latent space, $r$ numbers. It is computed
# once per query and head, not once per cached token, and each score is then a dot product
# with a cached latent: no key is built.
#
# The values follow the same way. With $w_{i,s}$ the attention weights of head $i$, the
# head's output is $\sum_s w_{i,s} \, W_{UV,i}\, c_s = W_{UV,i} \sum_s w_{i,s}\, c_s$, and
# `out_proj` adds the heads' outputs up through its blocks of columns $W_{O,i}$:
#
# $$
# u = \sum_i W_{O,i} \Big( W_{UV,i} \sum_s w_{i,s}\, c_s \Big)
# $$
#
# So $W_\text{UV}$ can be applied after the attention, to one vector of $r$ numbers per head
# and query, or multiplied into `out_proj` in advance, $W_{O,i} W_{UV,i}$. Either way no
# value is built: every head reads the cached latents themselves, as its keys and as its
# values.
#
# Multiplied in advance or applied in sequence, the result is the same; the cost is not.
# A matrix applied to one query costs one multiply-add per number it holds, and its numbers
# are read from memory at every step, like any weight. DeepSeek-V2's queries also pass
# through a latent, of 1536 numbers (`q_lora_rank`), so the fold on the query side maps
# that query latent to the key latent. With the sizes in DeepSeek-V2's `config.json`
# (DeepSeek-AI, 2024), per layer:

# %%
deepseek_v2 = {  # DeepSeek-V2's config.json, the keys that size its attention
    "num_hidden_layers": 60,
    "hidden_size": 5120,
    "num_attention_heads": 128,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,  # unrotated features of a head's query and key
    "qk_rope_head_dim": 64,  # rotated features: per head for queries, shared for keys
    "v_head_dim": 128,
}
h, r = deepseek_v2["num_attention_heads"], deepseek_v2["kv_lora_rank"]
r_q, d_model = deepseek_v2["q_lora_rank"], deepseek_v2["hidden_size"]
d_nope, d_rope = deepseek_v2["qk_nope_head_dim"], deepseek_v2["qk_rope_head_dim"]
d_v = deepseek_v2["v_head_dim"]

folds = {  # numbers in the two factors, numbers in their product
    "queries": (h * d_nope * r_q + h * d_nope * r, h * r_q * r),  # W_UQ (unrotated), W_UK
    "output": (h * d_v * r + d_model * h * d_v, h * r * d_model),  # W_UV, W_O
}
print(f"{'':<9}{'two factors':>13}{'product':>13}")
for side, (factors, product) in folds.items():
    print(f"{side:<9}{factors:>13,}{product:>13,}{product / factors:>6.1f} times")
# Out:
#            two factors      product
# queries     33,554,432  100,663,296   3.0 times
# output      92,274,688  335,544,320   3.6 times

# %% [markdown]
# A product of a $(m \times d)$ and a $(d \times n)$ matrix holds $m n$ numbers, against
# $d \, (m + n)$ for the two factors. At the small size of the fold above, the product was
# the smaller, $16 \times 8$ numbers per head against $8 \times (16 + 8)$. At DeepSeek-V2's,
# where a head's 128 features are fewer than either side of the product, it holds 3.0 and
# 3.6 times the numbers, and would cost as many times the arithmetic and the reading.
# Applied one after the other, the factors cost what they hold.
# That is what DeepSeek's own inference code does: with `attn_impl="absorb"`, it maps each
# head's query through its slice of `wkv_b` (their $W_\text{UK}$ and $W_\text{UV}$, stored
# as one matrix) with one `einsum`, and each head's weighted sum of latents through the
# other slice with another, before the output projection `wo` (the DeepSeek-V3 repository,
# `inference/model.py`).
#
# `absorb=True` makes the class attend this way (`_absorbed` above). Given the same
# weights, it must give what the plain path gives: for a whole sequence, and for the same
# sequence fed to the cache in chunks of 5, 1 and 6 tokens.


# %%
def chunked(module, x, sizes):
    """Feed x to the cache in chunks of the given sizes; the outputs, concatenated."""
    module.reset_cache()
    outs = [module(part, use_cache=True) for part in x.split(sizes, dim=1)]
    return torch.cat(outs, dim=1)  # (b, T, d_out)


torch.manual_seed(5)
plain = MultiHeadLatentAttention(16, 32, 0.0, num_heads=4, latent_dim=8)
absorbed = MultiHeadLatentAttention(16, 32, 0.0, num_heads=4, latent_dim=8, absorb=True)
absorbed.load_state_dict(plain.state_dict())
x = torch.randn(2, 12, 16)
for dtype, tolerance in [(torch.float32, 1e-5), (torch.float64, 1e-10)]:
    plain, absorbed, x = plain.to(dtype), absorbed.to(dtype), x.to(dtype)
    with torch.no_grad():
        whole = (absorbed(x) - plain(x)).abs().max().item()
        chunks = (chunked(absorbed, x, [5, 1, 6]) - chunked(plain, x, [5, 1, 6])).abs().max()
    print(f"{dtype}: whole sequence {whole < tolerance}, chunks {chunks.item() < tolerance}")
# Out:
# torch.float32: whole sequence True, chunks True
# torch.float64: whole sequence True, chunks True

# %% [markdown]
# The two differ by rounding only: below 1e-5 in float32 and 1e-10 in float64. What the
# absorbed layer keeps between calls is the same latent cache, and nothing else:

# %%
print("buffers:", [name for name, _ in absorbed.named_buffers()])
print("cache:", tuple(absorbed.cache_c_kv.shape), "(b, tokens, latent_dim)")
print("same cache as the plain path:", torch.equal(absorbed.cache_c_kv, plain.cache_c_kv))
# Out:
# buffers: ['cache_c_kv']
# cache: (2, 12, 8) (b, tokens, latent_dim)
# same cache as the plain path: True

# %% [markdown]
# ## Why DeepSeek adds one shared rotary key
#
# Rotary position embeddings ([their page](rotary-position-embeddings.py)) turn
# each query and key by its position: the score becomes
# $(R_t\, q_i)^\top (R_s W_{UK,i}\, c_s) = q_i^\top R_t^\top R_s W_{UK,i}\, c_s$, and
# $R_t^\top R_s$ sits between the query and $W_{UK,i}$ and changes with every pair of
# positions. Neither form of the fold survives it: no single matrix can be computed in
# advance, and the query mapped into the latent space, $W_{UK,i}^\top R_s^\top R_t\, q_i$,
# would differ for every cached token $s$. The keys would have to be rebuilt from every
# cached latent at every step, which is what absorbing was meant to avoid (DeepSeek-V2
# paper, section 2.1.3). The values are not rotated, so the fold of $W_\text{UV}$ is not
# affected.
#
# DeepSeek-V2 and V3 therefore keep position out of the compressed part and carry it on a
# few extra features:
#
# - each head gets 64 more query features, computed from the compressed query and rotated;
# - each token gets **one** rotated key of 64 features, computed from the token itself and
#   **shared by all heads**;
# - head $i$'s key is its own unrotated key from the latent followed by the shared rotated
#   key, so its score is the absorbed score plus the score of the rotated parts.
#
# The shared rotated key must be cached too, beside the latent: 512 + 64 = 576 numbers per
# token and layer in DeepSeek-V3. Had each of the 128 heads kept its own 64 rotated
# features, the cache would have grown by $128 \times 64$ numbers instead of 64, and
# most of what the latent saves would be gone. The class here, like the book's bonus code,
# has no position embedding and no rotated key.
#
# With $q_i^C$ the unrotated features of head $i$'s query and $q_i^R$ its rotated ones, the
# absorbed score of a cached token $s$ is
#
# $$
# (W_{UK,i}^\top q_i^C)^\top c_s + (q_i^R)^\top k_s^R
# $$
#
# one dot product between the head's 576 numbers, its query in the latent space followed by
# its rotated query, and the 576 numbers cached for the token, the latent followed by the
# rotated key. Every head scores the same cached vector, and every head reads the same
# latent of 512 numbers as its values. When decoding, absorbed latent attention is thus
# multi-query attention ([Grouped-query attention](grouped-query-attention.py)) with keys
# of 576 numbers and values of 512, shared by all 128 heads. Against a multi-head layer
# whose heads have the same sizes (keys of 128 + 64 rotated features, values of 128), with
# DeepSeek-V2's sizes from above:

# %%
key, value = r + d_rope, r  # absorbed: what every head reads of a cached token
mha_key, mha_value = d_nope + d_rope, d_v  # multi-head: each head its own key and value
per_head, per_head_mha = key + value, mha_key + mha_value  # a score and a weighted sum
read, read_mha = r + d_rope, h * (mha_key + mha_value)  # numbers cached per token and layer
print(f"multiply-adds per cached token and head: {per_head:,} against {per_head_mha}")
print(f"  {per_head / per_head_mha:.1f} times the arithmetic")
print(f"numbers read per cached token and layer: {read} against {read_mha:,}")
print(f"  1/{read_mha / read:.0f} of the reading")
# Out:
# multiply-adds per cached token and head: 1,088 against 320
#   3.4 times the arithmetic
# numbers read per cached token and layer: 576 against 40,960
#   1/71 of the reading

# %% [markdown]
# Each head does 3.4 times the arithmetic of a multi-head one for every cached token, and
# the layer reads 1/71 of the numbers. Which of the two weighs more depends on the
# hardware; the section after next weighs them for the whole model.
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
#
# ## Reading against arithmetic
#
# Decoding one token, each layer reads the whole cache and scores the new query against
# every cached token. The function below counts both for one decoded token with 131,072
# tokens in the cache, the 128K context of DeepSeek-V2 (DeepSeek-V2 paper, abstract), over
# all 60 layers, in bfloat16 (2 bytes a number). It counts the bytes read from the cache,
# not the weights, and the multiply-adds of attention: the scores, the weighted sums, and
# what each way of computing them adds; the projections of the new token, the same for
# all four, are left out. A FLOP count is twice the multiply-adds; the table's last column
# divides the multiply-adds by the bytes read. The four:
#
# - **MHA**: 128 heads, each caching its key (128 + 64 rotated features) and value (128);
# - **GQA**: the same heads with 8 key-value heads, a grouping chosen for this comparison,
#   not a DeepSeek model;
# - **MLA, plain**: reads the 576 cached numbers, then rebuilds every cached token's
#   unrotated keys and values, $512 \times 128 \times (128 + 128)$ multiply-adds per token
#   and layer, and attends as multi-head attention;
# - **MLA, absorbed**: reads the 576 numbers and attends as the multi-query attention
#   above, $128 \times (576 + 512)$ per token and layer, plus a cost per query that does not
#   grow with the context: mapping the query into the latent space and the weighted sum of
#   latents back up, $128 \times 128 \times 512 \times 2$ per layer.


# %%
def decode_cost(read_per_token, macs_per_token, macs_per_query, tokens, layers, nbytes=2):
    """Bytes read from the cache and multiply-adds of attention to decode one token."""
    read = layers * tokens * read_per_token * nbytes
    macs = layers * (tokens * macs_per_token + macs_per_query)
    return read, macs


layers, tokens = deepseek_v2["num_hidden_layers"], 131072
kv_heads = 8  # for grouped-query attention: a choice, not a DeepSeek model
attend = h * (mha_key + mha_value)  # scores and weighted sums of 128 heads, per cached token
kinds = {  # numbers read and multiply-adds per cached token, multiply-adds per query
    "MHA, 128 heads": (h * (mha_key + mha_value), attend, 0),
    "GQA, 8 key-value heads": (kv_heads * (mha_key + mha_value), attend, 0),
    "MLA, plain": (r + d_rope, r * h * (d_nope + d_v) + attend, 0),
    "MLA, absorbed": (r + d_rope, h * (key + value), h * (d_nope + d_v) * r),
}
costs = {kind: decode_cost(*counts, tokens, layers) for kind, counts in kinds.items()}
print(f"{'131,072 tokens, 60 layers':<25}{'read':>12}{'multiply-adds':>16}{'per byte':>10}")
for kind, (read_bytes, macs) in costs.items():
    gib, giga, per_byte = read_bytes / 2**30, macs / 1e9, macs / read_bytes
    print(f"{kind:<25}{gib:>8.2f} GiB{giga:>14,.1f} G{per_byte:>10,.1f}")
# Out:
# 131,072 tokens, 60 layers        read   multiply-adds  per byte
# MHA, 128 heads             600.00 GiB         322.1 G       0.5
# GQA, 8 key-value heads      37.50 GiB         322.1 G       8.0
# MLA, plain                   8.44 GiB     132,263.5 G  14,599.1
# MLA, absorbed                8.44 GiB       1,096.2 G     121.0

# %%
(mha_read, mha_macs), (_, plain_macs) = costs["MHA, 128 heads"], costs["MLA, plain"]
absorbed_read, absorbed_macs = costs["MLA, absorbed"]
per_query = layers * kinds["MLA, absorbed"][2]
print(f"plain MLA against MHA: {plain_macs / mha_macs:.1f} times the multiply-adds")
print(f"absorbed MLA against MHA: {absorbed_macs / mha_macs:.1f} times the multiply-adds,")
print(f"  1/{mha_read / absorbed_read:.0f} of the bytes read")
print(f"absorbed, the part per query: {per_query / absorbed_macs:.2%} of its multiply-adds")
# Out:
# plain MLA against MHA: 410.6 times the multiply-adds
# absorbed MLA against MHA: 3.4 times the multiply-adds,
#   1/71 of the bytes read
# absorbed, the part per query: 0.09% of its multiply-adds

# %% [markdown]
# Multi-head attention reads 600 GiB of cache for each decoded token and does half a
# multiply-add per byte it reads: its speed is set by reading, and grouped-query attention,
# at 8 per byte, reads less but is set by reading too. Plain latent attention reads 1/71 as
# much, but rebuilding the keys and values of 131,072 tokens in each of 60 layers costs it
# 410.6 times the arithmetic of multi-head attention: it trades a bottleneck in reading for
# one in arithmetic. Absorbed latent attention reads as little as the plain one and does
# 3.4 times the arithmetic of multi-head attention, 121 multiply-adds per byte; its cost per
# query is 0.09% of that at this length. On hardware that does more than about 121
# multiply-adds in the time it reads one byte, decoding with it is still limited by
# reading, and its attention takes about 1/71 of the time of multi-head attention.

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
# What latent attention costs instead is arithmetic and complexity. Absorbed, it does 3.4
# times the multiply-adds of multi-head attention for every cached token, in exchange for
# 1/71 of the bytes read (the section above); and the layer is harder to get right: two
# up-projections applied at different places, and a rotated key kept apart from the latent,
# with query features of its own.
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
