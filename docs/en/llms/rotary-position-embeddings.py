# %% [markdown]
# # Rotary position embeddings
#
# Beyond the book. Attention itself does not know where a token stands: without a causal
# mask, permute the keys and values together and each query's context vector stays the
# same. GPT-2 therefore adds
# a learned position vector to every token embedding before the first layer. Llama, Qwen,
# Mistral, Gemma and DeepSeek instead *rotate* the queries and keys inside every attention
# layer, by angles that grow with the position: rotary position embeddings, RoPE
# (Su et al., 2021). This page builds the two functions the book's bonus code uses, checks
# the property that makes them work, shows where they go in an attention layer, how the two
# layouts of published checkpoints map onto each other, and two variations of today's
# models: rotating only part of each head, and layers with no position at all. How the base
# of the angles is chosen, and how models read past the length they were trained on, is
# the next page: [RoPE beyond the training length](rope-beyond-training-length.py).

# %%
import math
import numbers

import matplotlib.pyplot as plt
import torch

from attention_mechanisms import (
    MultiHeadAttention,
    apply_rope,
    compute_rope_params,
    interleaved_to_halves,
)
from attention_mechanisms.checks import check_rope_inputs, check_size
from attention_mechanisms.plotting import show_figure
from attention_mechanisms.rope_scaling import scale_frequencies

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

# %% [markdown]
# ## Position as an angle
#
# Split a head's $d$ features into $d/2$ pairs and read each pair as a point in a plane.
# Here, as in the book's bonus code, pair $k$ is feature $k$ with feature $k + d/2$ (other
# code pairs neighbours; both layouts are compared below). At position $m$, pair $k$ is turned by the angle
# $m \theta_k$, where each pair has its own speed:
#
# $$
# \theta_k = \text{theta\_base}^{-2k/d}, \qquad k = 0, \dots, d/2 - 1
# $$
#
# The first pair turns by one radian per position, the last by almost nothing, like the
# hands of a clock. A rotation keeps lengths and angles between vectors, and turning the
# query by $m\theta_k$ and the key by $n\theta_k$ changes their dot product exactly as
# turning the query alone by $(m - n)\theta_k$ would. So the attention score of a query at
# position $m$ and a key at position $n$ depends on the two vectors and on $m - n$ only:
# attention sees how far apart two tokens are, not where they are.
#
# ## The two functions
#
# [`compute_rope_params`][attention_mechanisms.rope.compute_rope_params] computes the
# cosines and sines of every angle once, for every position up to `context_length`;
# [`apply_rope`][attention_mechanisms.rope.apply_rope] turns queries or keys with them.
# Both have the names and signatures of the RoPE functions in the book's bonus code:

# %% include="attention_mechanisms.rope.compute_rope_params"

# %% include="attention_mechanisms.rope.apply_rope"

# %% [markdown]
# - `inv_freq` holds the $d/2$ speeds $\theta_k$; `angles` multiplies every position by
#   every speed, `(context_length, d/2)`, and is written twice side by side, once for each
#   half of the features, so that `cos` and `sin` line up with `x`.
# - `apply_rope` takes the rows of the positions `offset` to `offset + T - 1`. `rotated` is
#   $(-x_2, x_1)$: the pair turned by a quarter, so that
#   $x \cos + \operatorname{rotated} \sin$ is the rotation of each pair
#   $(x_1, x_2)$ by its angle.
#
# ## What it does to a vector
#
# A vector of two features has one pair. Placed at positions 0 to 3, it turns by 0, 1, 2
# and 3 radians, and keeps its length:

# %%
cos, sin = compute_rope_params(head_dim=2, context_length=4)
x = torch.tensor([1.0, 0.0]).expand(1, 1, 4, 2)  # (b, heads, positions, head_dim)
turned = apply_rope(x, cos, sin)[0, 0]
print(turned)
print("lengths:", turned.norm(dim=-1))
print("angles:", torch.atan2(turned[:, 1], turned[:, 0]))
# Out:
# tensor([[ 1.0000,  0.0000],
#         [ 0.5403,  0.8415],
#         [-0.4161,  0.9093],
#         [-0.9900,  0.1411]])
# lengths: tensor([1.0000, 1.0000, 1.0000, 1.0000])
# angles: tensor([0.0000, 1.0000, 2.0000, 3.0000])

# %% [markdown]
# ## Scores depend on the distance only
#
# Take a query and a key, and place them at positions $m$ and $n$; then shift both by the
# same amount. The score stays the same; change the distance and it changes. The cosines
# and sines are computed in float64 here (the speeds $\theta_k$ stay float32, as in the
# bonus code), so that only the rounding of float64 is left:

# %%
torch.manual_seed(0)
cos64, sin64 = compute_rope_params(head_dim=16, context_length=512, dtype=torch.float64)
q = torch.randn(1, 1, 1, 16, dtype=torch.float64)
k = torch.randn(1, 1, 1, 16, dtype=torch.float64)


def score(query_position, key_position):
    rotated_q = apply_rope(q, cos64, sin64, offset=query_position)
    rotated_k = apply_rope(k, cos64, sin64, offset=key_position)
    return (rotated_q * rotated_k).sum().item()


for m, n in [(5, 2), (105, 102), (405, 402), (5, 4)]:
    print(f"query at {m:>3}, key at {n:>3}, distance {m - n}: score {score(m, n):.6f}")
# Out:
# query at   5, key at   2, distance 3: score -2.986276
# query at 105, key at 102, distance 3: score -2.986276
# query at 405, key at 402, distance 3: score -2.986276
# query at   5, key at   4, distance 1: score -7.818086

# %% [markdown]
# ## Where it goes in an attention layer
#
# RoPE replaces GPT-2's position embeddings, and it acts on queries and keys only, after the
# split into heads and before the scores. Values carry the content that is mixed; they are
# not rotated. Here is chapter 3's `MultiHeadAttention` with those two lines added, run on
# the book's six tokens (its projections as they are, with each head of size 2):

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)
cos, sin = compute_rope_params(head_dim=mha.head_dim, context_length=6)
x = inputs.unsqueeze(0)  # (1, 6, 3)
queries = mha.W_query(x).view(1, 6, 2, 2).transpose(1, 2)  # (b, num_heads, 6, head_dim)
keys = mha.W_key(x).view(1, 6, 2, 2).transpose(1, 2)
values = mha.W_value(x).view(1, 6, 2, 2).transpose(1, 2)
queries = apply_rope(queries, cos, sin)  # the two new lines
keys = apply_rope(keys, cos, sin)
attn_scores = queries @ keys.transpose(2, 3)
attn_scores.masked_fill_(mha.mask.bool()[:6, :6], -torch.inf)
attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
print(attn_weights[0, 0])
# Out:
# tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.4615, 0.5385, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.2862, 0.3487, 0.3651, 0.0000, 0.0000, 0.0000],
#         [0.2431, 0.2366, 0.2565, 0.2639, 0.0000, 0.0000],
#         [0.1893, 0.1834, 0.2044, 0.2117, 0.2112, 0.0000],
#         [0.1804, 0.1632, 0.1504, 0.1597, 0.1686, 0.1777]],
#        grad_fn=<SelectBackward0>)

# %% [markdown]
# With a cache, the new token is not at position 0: a token at position 5 must be turned by
# the angles of row 5, so its position is passed as `offset` (the classes' `ptr_current_pos`;
# not the cache's length, which a sliding window keeps short). Turning the tokens one at a
# time with their offsets gives what turning the whole sequence gives:

# %%
plain_keys = mha.W_key(x).view(1, 6, 2, 2).transpose(1, 2).detach()  # not turned yet
whole = apply_rope(plain_keys, cos, sin)
one_by_one = [apply_rope(plain_keys[:, :, t : t + 1], cos, sin, offset=t) for t in range(6)]
print("with offsets:", torch.equal(torch.cat(one_by_one, dim=2), whole))
# Out:
# with offsets: True

# %% [markdown]
# ## Two layouts of the same rotation
#
# Which two features form a pair is a convention of the code that trained a model, and
# published checkpoints use both:
#
# | layout | pair $k$ | used by |
# | --- | --- | --- |
# | interleaved | features $2k$ and $2k + 1$ | the RoFormer paper (Su et al., 2021, equation 34); Meta's reference Llama code (`apply_rotary_emb` in `llama/model.py`) and the checkpoints Meta ships with it; Mistral's `mistral-inference`; DeepSeek-V3's reference `inference/model.py`; GPT-J (`rotate_every_two`) |
# | split halves | features $k$ and $k + d/2$ | GPT-NeoX (`rotate_half`); Hugging Face `transformers` (Llama, Qwen, Mistral, Gemma) and the checkpoints converted for it; the book's bonus code; this package |
#
# Meta's code writes the interleaved form with complex numbers: each neighbouring pair is
# one complex number, and turning it by $m\theta_k$ is a multiplication by
# $e^{i m \theta_k}$. In a few lines, with the speeds of `compute_rope_params`:


# %%
def apply_rope_interleaved(x, theta_base=10_000):
    # Turn pair (2k, 2k + 1) of the token at position m by m * theta_k; x is (b, h, T, d).
    num_tokens, d = x.shape[-2], x.shape[-1]
    theta = 1.0 / theta_base ** (torch.arange(0, d, 2).float() / d)  # (d/2,), as above
    angles = torch.arange(num_tokens, dtype=torch.float64)[:, None] * theta  # (T, d/2)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2))  # (b, h, T, d/2)
    turned = pairs * torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(turned).flatten(-2)  # (b, h, T, d): pairs side by side again


# %% [markdown]
# Both layouts turn the same pairs by the same angles; they only place the two features
# of each pair differently in the vector. So a checkpoint trained with one works with the other once each head's
# query and key features are reordered: the even features first, then the odd ones.
# [`interleaved_to_halves`][attention_mechanisms.rope.interleaved_to_halves] gives that
# order, and Hugging Face's conversion script for Llama applies it to the rows of `wq`
# and `wk`, head by head. Here are two heads of 8 features with interleaved weights, as if
# loaded from such a checkpoint:

# %%
torch.manual_seed(7)
num_heads, head_dim, num_tokens = 2, 8, 10
w_query = torch.randn(num_heads * head_dim, 16, dtype=torch.float64)  # interleaved rows
w_key = torch.randn(num_heads * head_dim, 16, dtype=torch.float64)
x = torch.randn(num_tokens, 16, dtype=torch.float64)


def split_heads(w):
    return (x @ w.T).view(num_tokens, num_heads, head_dim).transpose(0, 1).unsqueeze(0)


def reorder_rows(w, order):
    return w.view(num_heads, head_dim, -1)[:, order].reshape_as(w)  # head by head


q, k = apply_rope_interleaved(split_heads(w_query)), apply_rope_interleaved(split_heads(w_key))
trained = q @ k.transpose(2, 3)  # the scores the checkpoint was trained to give
print(f"largest score: {trained.abs().max().item():.1e}")

order = interleaved_to_halves(head_dim)
print("order:", order.tolist())
cos64, sin64 = compute_rope_params(head_dim, context_length=num_tokens, dtype=torch.float64)
for label, order_used in [("reordered", order), ("as loaded", torch.arange(head_dim))]:
    q = apply_rope(split_heads(reorder_rows(w_query, order_used)), cos64, sin64)
    k = apply_rope(split_heads(reorder_rows(w_key, order_used)), cos64, sin64)
    gap = (q @ k.transpose(2, 3) - trained).abs().max().item()
    shown = "below 1e-12" if gap < 1e-12 else f"{gap:.1e}"  # float64 rounding: machine-dependent
    print(f"{label:<10} largest score difference: {shown}")
# Out:
# largest score: 1.4e+02
# order: [0, 2, 4, 6, 1, 3, 5, 7]
# reordered  largest score difference: below 1e-12
# as loaded  largest score difference: 1.7e+02

# %% [markdown]
# Reordered, the split-halves code gives the checkpoint's own scores, up to the rounding of
# float64. Loaded as it is, it pairs the wrong features, and the scores are off by as much
# as the largest score itself: the model runs and produces nonsense, with no error. Values and
# `out_proj` are not rotated and keep their order.
#
# ## The angles, drawn
#
# The figure uses `compute_rope_params` with the head size and the base of Llama 3
# (`head_dim=128`, `theta_base=500_000`). On the left, $\cos(m\theta_k)$ of four pairs over
# the first 100 positions: the first pair turns once every six or so positions, the later
# ones ever more slowly. On the right, the speed $\theta_k$ of each of the 64 pairs.

# %%
cos, sin = compute_rope_params(head_dim=128, theta_base=500_000, context_length=100)
theta = torch.atan2(sin[1, :64], cos[1, :64])  # the angle at position 1 is theta_k
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
for k in (0, 8, 16, 32):
    left.plot(cos[:, k], label=f"pair {k}")
left.set(xlabel="position $m$", ylabel=r"$\cos(m\theta_k)$")
left.legend(loc="lower left", framealpha=1)
right.plot(theta, marker=".")
right.set(yscale="log", xlabel="pair $k$", ylabel=r"$\theta_k$, radians per position")
show_figure(
    fig,
    caption="Figure 1. Left: how four pairs turn over 100 positions. Right: each pair's speed.",
    alt=(
        "Left: four cosine waves over positions 0 to 99; pair 0 oscillates fastest, pair 8 "
        "and pair 16 ever more slowly, and pair 32 stays close to 1. Right: the 64 speeds on "
        f"a log scale, a straight falling line from {theta[0]:.0f} radian per position for "
        f"pair 0 to {theta[-1]:.1e} for pair 63."
    ),
)
# Out:
# AttentionFigure("Figure 1. Left: how four pairs turn over 100 positions. Right: each pair's speed.")

# %% [markdown]
# ## Rotating part of a head
#
# Some models turn only some of each head's features and leave the others as they are.
# Qwen3-Next rotates 64 of its 256: the `config.json` of Qwen3-Next-80B-A3B has `head_dim`
# 256 and `partial_rotary_factor` 0.25, and Hugging Face's `modeling_qwen3_next.py`
# computes the speeds over the 64 rotated features ($\theta_k =
# \text{theta\_base}^{-2k/64}$), turns the first 64 features of each query and key with
# them, and appends the other 192 unchanged. With `apply_rope` that is one more line; the
# base here is the default one, not Qwen3-Next's:


# %%
def apply_partial_rope(x, cos, sin, offset=0):
    rotary_dim = cos.shape[-1]  # the speeds were computed for these features only
    turned = apply_rope(x[..., :rotary_dim], cos, sin, offset)  # (b, h, T, rotary_dim)
    return torch.cat([turned, x[..., rotary_dim:]], dim=-1)  # (b, h, T, head_dim)


head_dim, rotary_dim = 256, 64  # Qwen3-Next: partial_rotary_factor 0.25
cos64, sin64 = compute_rope_params(rotary_dim, context_length=512, dtype=torch.float64)
torch.manual_seed(0)
q, k = torch.randn(2, 1, 1, 1, head_dim, dtype=torch.float64)  # each (b, heads, 1 token, d)
for m, n in [(5, 2), (105, 102), (5, 4), (405, 0)]:
    products = apply_partial_rope(q, cos64, sin64, m) * apply_partial_rope(k, cos64, sin64, n)
    rotated, rest = products[..., :rotary_dim].sum(), products[..., rotary_dim:].sum()
    print(f"query at {m:>3}, key at {n:>3}: rotated part {rotated:8.4f}, the rest {rest:8.4f}")
# Out:
# query at   5, key at   2: rotated part   8.7242, the rest  -4.8080
# query at 105, key at 102: rotated part   8.7242, the rest  -4.8080
# query at   5, key at   4: rotated part   3.5369, the rest  -4.8080
# query at 405, key at   0: rotated part  15.6117, the rest  -4.8080

# %% [markdown]
# The score is the sum of the two parts. The rotated part depends on the distance, as
# before; the other 192 features give the same part of the score at every pair of
# positions, a comparison of contents alone. DeepSeek-V2 and V3 split their heads too, 128
# unrotated and 64 rotated features per query head, for another reason:
# [Multi-head latent attention](latent-attention.py).
#
# ## Layers without positions
#
# A layer may also carry no position at all: no learned embedding, no rotation. Such a
# NoPE layer is the layer of "Where it goes in an attention layer" without its two
# `apply_rope` lines. A causal decoder still sees order, through its mask. Kazemnejad et al.
# (2023, "The Impact of Positional Encoding on Length Generalization in Transformers")
# prove that the first layer of a decoder without positional encoding can recover each
# token's absolute position (Theorem 1). In their experiments on reasoning and mathematical
# tasks, decoder-only models without positional encoding generalised to inputs longer than
# those of training better than models with the explicit encodings they compared, RoPE
# among them (abstract).
#
# A few lines show how the mask carries position. With equal scores, the causal mask
# spreads a token's weights evenly over the $m + 1$ tokens it sees at position $m$; a value
# that marks the first token alone then averages to $1/(m + 1)$, and the position can be
# read back from it. Without the mask, every token sees all six and gets the same average:

# %%
num_tokens = 6
scores = torch.zeros(num_tokens, num_tokens)  # equal scores: neither content nor position
causal = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)
values = torch.zeros(num_tokens, 1)  # (num_tokens, 1)
values[0] = 1.0  # only the first token is marked, as a beginning-of-text token can be
for label, mask in [("causal", causal), ("no mask", torch.zeros_like(causal))]:
    average = (torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1) @ values)[:, 0]
    print(f"{label:<8} {average}")
    if label == "causal":
        print(f"{'':<8} positions read back: {(1 / average - 1).round().int().tolist()}")
# Out:
# causal   tensor([1.0000, 0.5000, 0.3333, 0.2500, 0.2000, 0.1667])
#          positions read back: [0, 1, 2, 3, 4, 5]
# no mask  tensor([0.1667, 0.1667, 0.1667, 0.1667, 0.1667, 0.1667])

# %% [markdown]
# Two published models interleave such layers with RoPE layers:
#
# - **Llama 4.** Meta's announcement (Meta, 2025, "The Llama 4 herd") calls "the use of
#   interleaved attention layers without positional embeddings" a key innovation, links it
#   to Kazemnejad et al., adds "inference time temperature scaling of attention", and names
#   the whole iRoPE; it gives no ratio. Hugging Face's `Llama4TextConfig` makes one
#   layer in four a NoPE layer by default (`no_rope_layer_interval` 4).
# - **SmolLM3.** Hugging Face's announcement (Hugging Face, 2025, "SmolLM3: smol,
#   multilingual, long-context reasoner") follows Yang et al. (2025), "selectively removing
#   rotary position embeddings from every 4th layer", and reports that its ablations found
#   better long-context results without a loss on short contexts.

# %% [markdown]
# ## What it costs in memory
#
# RoPE has no parameters, and it adds nothing to the KV cache: the keys are cached already
# turned. What it keeps is the table of cosines and sines, shared by every layer. Next to
# it, the learned position embeddings that GPT-2 small needs instead (a `pos_emb` of 1,024
# positions by 768 features) and the table of a Llama 3 8B-like shape (`head_dim` 128, a
# context of 8,192 tokens, Meta's `config.json` for Meta-Llama-3-8B):


# %%
def rope_table_bytes(head_dim, positions):
    cos, sin = compute_rope_params(head_dim, context_length=positions)
    return cos.nbytes + sin.nbytes


gpt2_pos_emb = torch.nn.Embedding(1024, 768)  # GPT-2 small's learned positions
print(f"{'':<38}{'bytes':>10}{'parameters':>12}")
label = "GPT-2 small, learned pos_emb"
size, count = gpt2_pos_emb.weight.nbytes, gpt2_pos_emb.weight.numel()
print(f"{label:<38}{size / 2**20:>6.1f} MiB{count:>12,}")
for head_dim, positions in [(64, 1024), (128, 8192)]:
    label = f"RoPE, head_dim {head_dim}, {positions:,} positions"
    print(f"{label:<38}{rope_table_bytes(head_dim, positions) / 2**20:>6.1f} MiB{0:>12,}")
# Out:
#                                            bytes  parameters
# GPT-2 small, learned pos_emb             3.0 MiB     786,432
# RoPE, head_dim 64, 1,024 positions       0.5 MiB           0
# RoPE, head_dim 128, 8,192 positions      8.0 MiB           0

# %% [markdown]
# ## Exercises
#
# Written your own `compute_rope_params` and `apply_rope`? `attention-check` compares them
# with this page's functions, and says so when your `apply_rope` turns neighbouring features
# together, the other layout ([Check your code](../chapter-3/check-your-code.py)).
#
# ### Exercise 1: Constant along the diagonals
#
# Put the same query at every position and the same key at every position, and compute all
# the scores with RoPE. If the scores depend only on the distance, every diagonal of the
# score matrix holds one value. Check it.

# %% tags=["solution"]
torch.manual_seed(1)
cos64, sin64 = compute_rope_params(head_dim=8, context_length=10, dtype=torch.float64)
q = torch.randn(8, dtype=torch.float64).expand(1, 1, 10, 8)
k = torch.randn(8, dtype=torch.float64).expand(1, 1, 10, 8)
scores = (apply_rope(q, cos64, sin64) @ apply_rope(k, cos64, sin64).transpose(2, 3))[0, 0]
diagonals = [scores.diagonal(offset) for offset in range(-9, 10)]
print("each diagonal constant:", all(torch.allclose(d, d[0].expand_as(d)) for d in diagonals))
print("diagonals differ:", len({round(d[0].item(), 6) for d in diagonals}) == 19)
# Out:
# each diagonal constant: True
# diagonals differ: True

# %% [markdown] tags=["solution"]
# The score matrix is constant along each diagonal (a Toeplitz matrix): it depends on
# $m - n$ alone, and different distances give different scores.

# %% [markdown]
# ### Exercise 2: The slowest pair
#
# With Llama 3's `head_dim=128` and `theta_base=500_000`, how many positions does
# the first pair need for a full turn, and how many does the last pair need?

# %% tags=["solution"]
cos, sin = compute_rope_params(head_dim=128, theta_base=500_000, context_length=2)
speeds = torch.atan2(sin[1, :64], cos[1, :64])  # the angle at position 1 is theta_k
turn = 2 * torch.pi / speeds
print(f"first pair: {turn[0]:.2f} positions, last pair: {turn[-1]:,.0f} positions")
# Out:
# first pair: 6.28 positions, last pair: 2,559,196 positions

# %% [markdown] tags=["solution"]
# The first pair turns once every $2\pi$ positions; the last turns so slowly that a full
# turn takes far more positions than any context. Between them, the speeds fall
# geometrically, so some pair measures distances at every scale.
