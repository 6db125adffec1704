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
# layouts of published checkpoints map onto each other, and how Llama 3.1 rescales the
# angles for long contexts.

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
from attention_mechanisms.checks import check_freq_config, check_rope_inputs, check_size
from attention_mechanisms.plotting import show_figure

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
# ## Longer contexts: rescaling the speeds
#
# A model sees, in training, the angles of the positions it is trained on. A pair that
# turns many times within that context has met every angle; a slow pair has met only a
# small arc, and past the trained length it reaches angles the model has never seen. That
# is RoPE's cost in quality: attention degrades past the context it was trained on, and
# growing the context means changing the angles.
#
# Llama 3.1 reads 128K tokens where Llama 3 read 8,192, and part of the change is a
# rescaling of the speeds, given by the `rope_scaling` of Meta's `config.json` for
# Llama 3.1 8B: `factor` 8, `low_freq_factor` 1, `high_freq_factor` 4 and
# `original_max_position_embeddings` 8192. The book's bonus code passes these to
# `compute_rope_params` as `freq_config` (with the last key named
# `original_context_length`), and so does this package:
#
# - a pair that turns fewer than `low_freq_factor` times in the original 8,192 positions
#   (a wavelength above 8,192 positions) is slowed down by `factor`, so that the longer
#   context stays within angles the model has seen;
# - a pair that turns more than `high_freq_factor` times (a wavelength below 2,048) keeps its
#   speed: it measures short distances, which do not change with the length of the text;
# - the pairs between are blended from one to the other, in proportion to how often they
#   turn.

# %%
freq_config = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_context_length": 8192,
}
cos, sin = compute_rope_params(128, theta_base=500_000, context_length=2)
cos31, sin31 = compute_rope_params(128, 500_000, 2, freq_config)
before = torch.atan2(sin[1, :64], cos[1, :64])  # theta_k: the angle at position 1
after = torch.atan2(sin31[1, :64], cos31[1, :64])
ratio = before / after
print("pairs that keep their speed:", (ratio == 1).sum().item())
print("pairs slowed by 8:", torch.isclose(ratio, torch.tensor(8.0)).sum().item())
print("pairs blended:", ((ratio > 1) & ~torch.isclose(ratio, torch.tensor(8.0))).sum().item())
# Out:
# pairs that keep their speed: 29
# pairs slowed by 8: 29
# pairs blended: 6

# %%
wavelength = 2 * torch.pi / before  # positions per full turn
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
ax.plot(wavelength, before, marker=".", label="Llama 3 (no scaling)")
ax.plot(wavelength, after, marker=".", label="Llama 3.1 (freq_config)")
for edge in (2048, 8192):
    ax.axvline(edge, color="0.5", linestyle="--", linewidth=1)
ax.set(xscale="log", yscale="log", xlabel="wavelength before scaling, positions per turn")
ax.set(ylabel=r"$\theta_k$, radians per position")
ax.legend(loc="upper right", framealpha=1)
show_figure(
    fig,
    caption="Figure 2. The 64 speeds of a Llama 3 head before and after Llama 3.1's rescaling.",
    alt=(
        "A log-log chart of each pair's speed against its wavelength before scaling. The "
        "two lines coincide for wavelengths below 2,048 positions (a dashed line), the "
        "scaled line bends away between 2,048 and 8,192 (a second dashed line), and beyond "
        "8,192 it runs parallel to the unscaled one, eight times lower."
    ),
)
# Out:
# AttentionFigure("Figure 2. The 64 speeds of a Llama 3 head before and after Llama 3.1's rescaling.")

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
