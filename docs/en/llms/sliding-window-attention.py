# %% [markdown]
# # Sliding-window attention
#
# Beyond the book. In causal attention every token attends to all the tokens before it, so
# the KV cache grows with the length of the text, and so does the work of each new token.
# The first Mistral 7B in every layer, Gemma 2 in every other layer and Gemma 3 in five
# layers of six let each token look back only a fixed number of tokens: a window that
# slides along with it. Longformer (Beltagy, Peters and Cohan, 2020, section 3) proposed
# this sliding-window attention for long documents, together with dilated windows, which
# leave gaps between the keys to reach further, and global attention for a few chosen
# tokens, which attend to and are seen by every token. This page builds the class from
# `MultiHeadAttention`, checks it against PyTorch, measures the cache of a Gemma 3-like
# model, and shows where the window saves work and where it does not.

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from attention_mechanisms import MultiHeadAttention, MultiHeadAttentionWithSWA
from attention_mechanisms.checks import (
    check_dropout,
    check_flag,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)
from attention_mechanisms.plotting import show_attention, show_figure
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
tokens = ["Your", "journey", "starts", "with", "one", "step"]

# %% [markdown]
# ## A band instead of a triangle
#
# The causal mask of chapter 3 hides the keys after each query. A sliding window of $w$
# tokens also hides the keys $w$ or more positions before it, so query $i$ sees key $j$
# only when $0 \le i - j < w$: itself and the $w - 1$ tokens before it.
#
# $$
# M_{ij} = \begin{cases} 0 & 0 \le i - j < w \\ -\infty & \text{otherwise} \end{cases}
# $$
#
# The figure shows both masks for the book's six tokens, computed by
# [`position_hide_mask`][attention_mechanisms.positions.position_hide_mask], the function
# that the class calls (1 marks a key the query may see).

# %%
causal_keep = ~position_hide_mask(0, 6, 0, 6)
window_keep = ~position_hide_mask(0, 6, 0, 6, window=3)
show_attention(
    torch.stack([causal_keep, window_keep]).float(),
    tokens,
    head_titles=["causal", "sliding window, w = 3"],
    decimals=0,
    caption="Figure 1. Which keys (columns) each query (rows) may see.",
    alt=(
        "Two 6 by 6 grids of ones and zeros. Left, causal: ones on and below the diagonal. "
        "Right, a window of 3: ones only on the diagonal and the two diagonals below it, so "
        "each row has at most three ones."
    ),
)
# Out:
# AttentionFigure('Figure 1. Which keys (columns) each query (rows) may see.')

# %% [markdown]
# Every row of the window keeps at most three keys, however long the text grows. Tokens
# further back still matter: a layer passes on what it read, so after $L$ layers a token can
# depend on tokens up to $L (w - 1)$ positions back (exercise 1). Models also keep a few
# ordinary, *global* layers: Gemma 3 has one for every five sliding-window layers.
#
# ## The class, as the lines that change
#
# [`MultiHeadAttentionWithSWA`][attention_mechanisms.sliding_window.MultiHeadAttentionWithSWA]
# against chapter 3's `MultiHeadAttention` (the whole class is folded under the changes):

# %% include="attention_mechanisms.sliding_window.MultiHeadAttentionWithSWA" diff_from="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# What changed:
#
# - `sliding_window_size` replaces `context_length`; `None` means no window. The
#   projections are created in the book's order, so the same seed gives the same
#   parameters as `MultiHeadAttention`.
# - There is no mask buffer. `position_hide_mask` builds the band from the positions of the
#   queries and keys in every call: `distance < 0` hides the future, `distance >= window`
#   the keys that have left the window.
# - With `use_cache=True`, `_attend_to_cache` joins the new keys and values to the cached
#   ones and keeps only the last `sliding_window_size` in the cache. A call with several new
#   tokens attends to `sliding_window_size - 1` cached tokens plus its own, because that is
#   all its earliest query can see.
# - The cache is kept before `transpose`, as `(b, tokens, num_heads, head_dim)`, so that
#   trimming it cuts along dimension 1.
#
# ## On the book's six tokens
#
# With a window as long as the input, nothing is hidden beyond the causal mask, and the
# class is `MultiHeadAttention`: created after the same seed, the two have the same
# parameters and give the same bits. A window of 2 changes every row after the second:

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2)
torch.manual_seed(123)
swa = MultiHeadAttentionWithSWA(d_in=3, d_out=2, dropout=0.0, num_heads=2, sliding_window_size=6)
print("window of 6, bit for bit:", torch.equal(swa(batch), mha(batch)))
swa.sliding_window_size = 2
print(swa(batch)[0])
same_rows = zip(swa(batch)[0], mha(batch)[0], strict=True)
print("rows equal to chapter 3's:", [torch.equal(a, b) for a, b in same_rows])
# Out:
# window of 6, bit for bit: True
# tensor([[0.3190, 0.4858],
#         [0.2943, 0.3897],
#         [0.2677, 0.2999],
#         [0.2453, 0.3837],
#         [0.2299, 0.4450],
#         [0.2338, 0.4354]], grad_fn=<SelectBackward0>)
# rows equal to chapter 3's: [True, True, False, False, False, False]

# %% [markdown]
# The first two rows are chapter 3's (they see at most two tokens anyway); from "starts" on,
# each token mixes only itself and the token before it.
#
# ## Checked against PyTorch
#
# `F.scaled_dot_product_attention` takes any mask. Its boolean `attn_mask` marks the keys a
# query may *see* (the opposite of the book's mask), so the band is built here a second way,
# from `tril` and `triu`, and given the module's own queries, keys and values:

# %%
torch.manual_seed(0)
swa = MultiHeadAttentionWithSWA(d_in=16, d_out=32, dropout=0.0, num_heads=4, sliding_window_size=4)
x = torch.randn(2, 12, 16)
b, t, _ = x.shape
ones = torch.ones(t, t, dtype=torch.bool)
band = ones.tril() & ones.triu(diagonal=-(4 - 1))  # True: 0 <= i - j < 4
q, k, v = (w(x).view(b, t, 4, 8).transpose(1, 2) for w in (swa.W_query, swa.W_key, swa.W_value))
context = F.scaled_dot_product_attention(q, k, v, attn_mask=band)
expected = swa.out_proj(context.transpose(1, 2).reshape(b, t, 32))
print("agrees with SDPA:", (swa(x) - expected).abs().max().item() < 1e-6)
# Out:
# agrees with SDPA: True

# %% [markdown]
# ## The cache stops growing
#
# In generation the cache only needs the last $w$ tokens. Fed one token at a time, the
# module keeps at most `sliding_window_size` of them, and still gives what one pass over
# the whole input gives; so does feeding the input in uneven chunks:

# %%
torch.manual_seed(1)
swa = MultiHeadAttentionWithSWA(d_in=3, d_out=4, dropout=0.0, num_heads=2, sliding_window_size=3)
with torch.no_grad():
    full = swa(batch)
    swa.reset_cache()
    steps, sizes = [], []
    for i in range(6):
        steps.append(swa(batch[:, i : i + 1], use_cache=True))
        sizes.append(swa.cache_k.shape[1])
    swa.reset_cache()
    chunks = [swa(batch[:, :4], use_cache=True), swa(batch[:, 4:], use_cache=True)]
print("tokens in the cache after each step:", sizes)
print("token by token = one pass:", torch.allclose(torch.cat(steps, dim=1), full, atol=1e-6))
print("chunks of 4 and 2 = one pass:", torch.allclose(torch.cat(chunks, dim=1), full, atol=1e-6))
# Out:
# tokens in the cache after each step: [1, 2, 3, 3, 3, 3]
# token by token = one pass: True
# chunks of 4 and 2 = one pass: True

# %% [markdown]
# ## What it saves, at a published size
#
# Gemma 3 27B has 62 layers with 16 key-value heads of 128 features each, kept in
# bfloat16, a context of 128K (131,072) tokens, and five sliding-window layers with a window
# of 1,024 tokens for every global layer (the Gemma 3 technical report, Gemma Team, 2025;
# and the model's `config.json`: `num_hidden_layers` 62,
# `num_key_value_heads` 16, `head_dim` 128, `sliding_window` 1024). With one global layer in
# every six, 10 of the 62 layers are global and 52 slide.
#
# Gemma's 32 query heads share those 16 key-value heads (grouped-query attention), and a
# cache depends only on the keys and values: a layer of this class with 16 heads of 128
# features caches exactly what a Gemma 3 27B layer caches. The sizes below are those of the
# cache tensors the class keeps, built on the `meta` device (shapes and dtypes, no data).


# %%
def cache_bytes(module, num_tokens, d_in):
    """Bytes of the cache that module keeps after reading num_tokens tokens."""
    module.reset_cache()
    with torch.no_grad():
        x = torch.empty(1, num_tokens, d_in, device="meta", dtype=torch.bfloat16)
        module(x, use_cache=True)
    return sum(buffer.nbytes for buffer in module.buffers())


def gemma3_27b_layer(window):
    with torch.device("meta"):
        layer = MultiHeadAttentionWithSWA(5376, 2048, 0.0, 16, sliding_window_size=window)
    return layer.to(torch.bfloat16)


def model_cache_bytes(num_tokens, local_layers, global_layers=62):
    """The cache of a model with some sliding-window (local) layers; the rest are global."""
    local = local_layers * cache_bytes(gemma3_27b_layer(1024), num_tokens, 5376)
    rest = (global_layers - local_layers) * cache_bytes(gemma3_27b_layer(None), num_tokens, 5376)
    return local + rest


print(f"{'context':>9}{'62 global layers':>19}{'52 sliding + 10 global':>25}")
for t in (1024, 8192, 32768, 131072):
    every_layer_global = model_cache_bytes(t, local_layers=0)
    gemma_layout = model_cache_bytes(t, local_layers=52)
    print(f"{t:>9,}{every_layer_global / 2**30:>15.2f} GiB{gemma_layout / 2**30:>21.2f} GiB")
# Out:
#   context   62 global layers   52 sliding + 10 global
#     1,024           0.48 GiB                 0.48 GiB
#     8,192           3.88 GiB                 1.03 GiB
#    32,768          15.50 GiB                 2.91 GiB
#   131,072          62.00 GiB                10.41 GiB

# %% [markdown]
# Per token, a layer caches 8 KiB (16 heads, 128 features, a key and a value, 2 bytes each):
# 496 KiB for 62 global layers. Once the text is longer than the window, each new token adds
# only 80 KiB, the share of the 10 global layers. At the full context the 5:1 layout keeps
# about a sixth of the cache; the sliding layers' share stays at 416 MiB whatever the length.

# %%
lengths = [1024, 4096, 16384, 65536, 131072]
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for label, local in [("62 global layers", 0), ("52 sliding + 10 global", 52)]:
    ax.plot(
        lengths, [model_cache_bytes(t, local) / 2**30 for t in lengths], marker="o", label=label
    )
ax.set(xscale="log", yscale="log", xlabel="tokens in the context", ylabel="GiB")
ax.set_xticks(lengths, [f"{t:,}" for t in lengths])
ax.minorticks_off()
ax.legend()
show_figure(
    fig,
    caption=(
        "Figure 2. KV-cache size of a Gemma 3 27B-like model for one sequence, from the "
        "cache tensors of MultiHeadAttentionWithSWA."
    ),
    alt=(
        "A log-log line chart of cache size in GiB against tokens in the context, from "
        "1,024 to 131,072. Both lines start at the same point; the all-global line rises "
        "straight, the line of 52 sliding and 10 global layers rises more slowly and ends "
        "about six times lower."
    ),
)
# Out:
# AttentionFigure('Figure 2. KV-cache size of a Gemma 3 27B-like model for one sequence, from the cache tensors of MultiHeadAttentionWithSWA.')

# %% [markdown]
# ## Where the work is saved, and where it is not
#
# The class masks; it does not skip. Given a whole sequence, it computes every score of
# the $T \times T$ matrix, as `MultiHeadAttention` does, and then hides those outside the
# band. For a sequence of 4,096 tokens and Gemma 3's window of 1,024, the mask that
# `forward` uses keeps this share of the matrix:

# %%
hide = position_hide_mask(0, 4096, 0, 4096, window=1024)
kept = (~hide).sum().item()
print(f"scores computed: {hide.numel():,}; scores the window keeps: {kept:,}")
print(f"share kept: {kept / hide.numel():.3f}; causal attention alone keeps {4097 / 8192:.3f}")
# Out:
# scores computed: 16,777,216; scores the window keeps: 3,670,528
# share kept: 0.219; causal attention alone keeps 0.500

# %% [markdown]
# On a whole sequence, then, the class computes every score of the matrix, as causal
# attention does, and keeps less than a quarter of them. The work is saved in two places:
#
# - **In cached generation**, where this class does save it: the cache holds at most
#   `sliding_window_size` tokens (the measurement above), so each new token scores at most
#   that many keys however long the text has grown.
# - **In kernels that skip the blocks outside the band.** Fast kernels compute attention
#   tile by tile ([Making attention fast](../fast/making-attention-fast.py)), and a tile
#   that lies wholly outside the window need not be computed at all. FlashAttention-2 takes
#   the window as `window_size=(left, right)`; PyTorch's FlexAttention builds a `BlockMask`
#   from a mask function and does not compute the blocks that it marks empty. The Mistral 7B
#   paper reports such changes to FlashAttention and xFormers doubling the speed at 16K
#   tokens with a window of 4,096 (Jiang et al., 2023, section 2).
#
# How much can such a kernel save when it reads a whole prompt (the *prefill*)? The fair
# comparison is not the $T \times T$ matrix but causal attention's triangle, $T (T + 1) / 2$
# scores, because a causal kernel already skips the tiles above the diagonal. With the
# window, token $t$ (counted from 0) scores $\min(t + 1, w)$ keys. The counts below are for
# Gemma 3's window, checked at 4,096 tokens against the masks that `position_hide_mask`
# builds:


# %%
def window_scores(num_tokens, window):
    """Scores inside the band: token t scores min(t + 1, window) keys."""
    return torch.arange(1, num_tokens + 1).clamp(max=window).sum().item()


def causal_scores(num_tokens):
    return num_tokens * (num_tokens + 1) // 2


causal_kept = (~position_hide_mask(0, 4096, 0, 4096)).sum().item()
print("band count = mask's:", window_scores(4096, 1024) == kept)  # kept: the cell above
print("triangle count = mask's:", causal_scores(4096) == causal_kept)
for t in (4096, 131072):
    band, triangle = window_scores(t, 1024), causal_scores(t)
    print(f"{t:>7,} tokens: {band:>11,} of {triangle:>13,} causal scores, {band / triangle:.3f}")
# Out:
# band count = mask's: True
# triangle count = mask's: True
#   4,096 tokens:   3,670,528 of     8,390,656 causal scores, 0.437
# 131,072 tokens: 133,693,952 of 8,590,000,128 causal scores, 0.016

# %% [markdown]
# At 4,096 tokens the window leaves 0.437 of causal attention's scores, so the kernel saves a
# little over half; at 131,072 tokens it leaves 0.016, because the triangle grows as $T^2$
# and the band only as $T w$. (A kernel that works in tiles also computes the parts of the
# border tiles that lie outside the band, a little more than these counts.) The saving is on
# attention alone: the scores, and the weighted sums of values, one term per score. The
# projections of queries, keys and values, the output projection and the MLP (the
# feed-forward layer) cost the same for every token with or without a window, and the
# global layers still compute their whole triangle, so a whole model saves less than these
# ratios.
#
# ## What it costs in quality
#
# A token can no longer read a distant token directly: what lies beyond the window reaches
# it only through the layers, $w - 1$ positions per layer (exercise 1), and only the global
# layers see the whole context. The models that use a window report the cost as small:
#
# - **Mistral 7B** (Jiang et al., 2023, section 2): a window of 4,096 in each of 32 layers
#   gives a theoretical span of about 131K tokens, and the cache that keeps only the window
#   (a rolling buffer) uses 8 times less memory on a sequence of 32K tokens "without
#   impacting the model quality".
# - **Gemma 3** (Gemma Team, 2025, section 5.2): in 2B and 9B models, going from one local
#   layer per global layer to 7 per global layer changed the validation perplexity very
#   little (Figure 3), and the window could be made much smaller than 4,096 without
#   raising it (Figure 4). At 32K tokens, the cache of a 2B model with only global layers
#   adds 60% to the memory of its weights; with 3 local layers per global layer and a
#   window of 1,024, less than 15% (Figure 5).
#
# These are perplexities and memory, not every task: a question about a passage far back in
# a long document has to be answered by the global layers alone.
#
# ## Exercises
#
# Written your own `MultiHeadAttentionWithSWA`? `attention-check` compares it with this
# page's class holding your weights, and checks that each token sees itself and the
# `sliding_window_size - 1` tokens before it, no more and no fewer
# ([Check your code](../chapter-3/check-your-code.py)).
#
# ### Exercise 1: How far back can a token reach?
#
# Stack three layers with a window of 3 and find which input tokens the last output
# depends on. Use the gradient: an input that the output does not depend on gets a zero
# gradient.

# %% tags=["solution"]
torch.manual_seed(3)
layers = [MultiHeadAttentionWithSWA(4, 4, 0.0, 2, sliding_window_size=3) for _ in range(3)]
x = torch.randn(1, 12, 4, requires_grad=True)
out = x
for layer in layers:
    out = layer(out)
out[0, -1].sum().backward()
reached = (x.grad[0].abs().sum(dim=-1) > 0).nonzero().flatten().tolist()
print("the last token (position 11) depends on positions", reached)
# Out:
# the last token (position 11) depends on positions [5, 6, 7, 8, 9, 10, 11]

# %% [markdown] tags=["solution"]
# Each layer reaches $w - 1 = 2$ tokens further back, so three layers reach
# $3 \times 2 = 6$ positions: 11 back to 5.

# %% [markdown]
# ### Exercise 2: Which window is plain causal attention?
#
# For the six-token batch, find the smallest window that gives the same output as no
# window at all.

# %% tags=["solution"]
torch.manual_seed(123)
swa = MultiHeadAttentionWithSWA(d_in=3, d_out=2, dropout=0.0, num_heads=2)
no_window = swa(batch)
for window in range(1, 8):
    swa.sliding_window_size = window
    if torch.equal(swa(batch), no_window):
        print("smallest window equal to causal attention:", window)
        break
# Out:
# smallest window equal to causal attention: 6

# %% [markdown] tags=["solution"]
# The last token has the longest reach: it sees itself and the five tokens before it, six
# in all. Any window of at least as many tokens as the input hides nothing more than the
# causal mask.
