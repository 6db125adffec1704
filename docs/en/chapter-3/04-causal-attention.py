# %% [markdown]
# # Causal attention
#
# Book section 3.5: hiding future words. A language model is trained to predict each next
# token from the tokens before it. If, during training, position $t$ could attend to
# positions after $t$, it could simply copy the answer. **Causal attention** (also called
# masked attention) lets each token attend only to itself and to the tokens before it.

# %%
import torch
from torch import nn

from attention_mechanisms import CausalAttention, SelfAttention_v2, causal_mask
from attention_mechanisms.checks import (
    check_dropout,
    check_like_parameters,
    check_size,
    check_tokens,
)
from attention_mechanisms.plotting import show_attention

tokens = ["Your", "journey", "starts", "with", "one", "step"]
inputs = torch.tensor(
    [
        [0.43, 0.15, 0.89],  # Your     (x^1)
        [0.55, 0.87, 0.66],  # journey  (x^2)
        [0.57, 0.85, 0.64],  # starts   (x^3)
        [0.22, 0.58, 0.33],  # with     (x^4)
        [0.77, 0.25, 0.10],  # one      (x^5)
        [0.05, 0.80, 0.55],  # step     (x^6)
    ]
)

# %% [markdown]
# ## 3.5.1 Applying a causal attention mask
#
# We reuse the `SelfAttention_v2` from the previous page (seed 789) and compute its attention
# weights as before:

# %%
torch.manual_seed(789)
sa_v2 = SelfAttention_v2(d_in=3, d_out=2)

queries = sa_v2.W_query(inputs)
keys = sa_v2.W_key(inputs)
attn_scores = queries @ keys.T
attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
print(attn_weights)
# Out:
# tensor([[0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
#         [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
#         [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
#         [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
#         [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<SoftmaxBackward0>)

# %% [markdown]
# ### First way: zero the future, then renormalise
#
# Everything above the diagonal is a query looking at a later token. A lower-triangular
# matrix of ones (`torch.tril`) marks what may stay:

# %%
context_length = attn_scores.shape[0]
mask_simple = torch.tril(torch.ones(context_length, context_length))
print(mask_simple)
# Out:
# tensor([[1., 0., 0., 0., 0., 0.],
#         [1., 1., 0., 0., 0., 0.],
#         [1., 1., 1., 0., 0., 0.],
#         [1., 1., 1., 1., 0., 0.],
#         [1., 1., 1., 1., 1., 0.],
#         [1., 1., 1., 1., 1., 1.]])

# %%
masked_simple = attn_weights * mask_simple
print(masked_simple)
# Out:
# tensor([[0.1921, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.2041, 0.1659, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.2036, 0.1659, 0.1662, 0.0000, 0.0000, 0.0000],
#         [0.1869, 0.1667, 0.1668, 0.1571, 0.0000, 0.0000],
#         [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.0000],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<MulBackward0>)

# %% [markdown]
# The rows no longer sum to 1, so each row is divided by its new sum:

# %%
row_sums = masked_simple.sum(dim=-1, keepdim=True)
masked_simple_norm = masked_simple / row_sums
print(masked_simple_norm)
# Out:
# tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
#         [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
#         [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<DivBackward0>)

# %% [markdown]
# ### Second way: $-\infty$ before the softmax
#
# Softmax maps $-\infty$ to exactly 0 ($e^{-\infty} = 0$), and the remaining weights are
# normalised among themselves. So setting the future **scores** to $-\infty$ gives causal
# weights in a single softmax:
#
# $$
# \alpha_{ij} = \operatorname{softmax}\left(\frac{\omega_i}{\sqrt{d_k}} + m_i\right)_j,
# \qquad m_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}
# $$
#
# This time the mask marks what to **hide**: ones *above* the diagonal, from `torch.triu`
# with `diagonal=1`. (Mixing up the two conventions is a classic bug; see the
# [Pitfalls](pitfalls.py).)

# %%
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
print(masked)
# Out:
# tensor([[0.2899,   -inf,   -inf,   -inf,   -inf,   -inf],
#         [0.4656, 0.1723,   -inf,   -inf,   -inf,   -inf],
#         [0.4594, 0.1703, 0.1731,   -inf,   -inf,   -inf],
#         [0.2642, 0.1024, 0.1036, 0.0186,   -inf,   -inf],
#         [0.2183, 0.0874, 0.0882, 0.0177, 0.0786,   -inf],
#         [0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078]],
#        grad_fn=<MaskedFillBackward0>)

# %%
attn_weights = torch.softmax(masked / keys.shape[-1] ** 0.5, dim=-1)
print(attn_weights)
# Out:
# tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
#         [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
#         [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<SoftmaxBackward0>)

# %% [markdown]
# The two ways agree, up to rounding. Renormalising after the softmax is mathematically the
# same as leaving the hidden entries out of the softmax, because the common factor
# $\sum_k e^{\omega_{ik} / \sqrt{d_k}}$, scaling included, cancels:

# %%
print("same weights:", torch.allclose(attn_weights, masked_simple_norm))
# Out:
# same weights: True

# %% [markdown]
# The package's [`causal_mask`][attention_mechanisms.functional.causal_mask] builds the same
# hide mask as a boolean tensor:

# %%
print(causal_mask(context_length))
print("same as the triu mask:", torch.equal(causal_mask(context_length), mask.bool()))
# Out:
# tensor([[False,  True,  True,  True,  True,  True],
#         [False, False,  True,  True,  True,  True],
#         [False, False, False,  True,  True,  True],
#         [False, False, False, False,  True,  True],
#         [False, False, False, False, False,  True],
#         [False, False, False, False, False, False]])
# same as the triu mask: True

# %%
show_attention(
    attn_weights,
    tokens,
    caption="Figure 3. Causal attention weights: every entry above the diagonal is zero.",
    alt=(
        "Heatmap of the 6 by 6 causal attention weights. The upper triangle is all zeros. "
        "Your attends only to itself with weight 1.00; journey splits 0.55 and 0.45 "
        "between Your and itself; the last row, step, spreads between 0.153 and 0.194 over "
        "all six tokens."
    ),
)
# Out:
# AttentionFigure('Figure 3. Causal attention weights: every entry above the diagonal is zero.')

# %% [markdown]
# The first row is now $[1, 0, 0, 0, 0, 0]$: the first token has nothing before it, so it
# can only attend to itself.
#
# ## 3.5.2 Masking additional attention weights with dropout
#
# **Dropout** zeroes randomly chosen values during training, so the model cannot come to
# rely on any particular one; it is switched off at inference time. In attention it is
# applied to the attention weights. With a dropout rate $p$, each value is zeroed with
# probability $p$, and the values that survive are multiplied by $1 / (1 - p)$, so that on
# average every weight keeps its size:
#
# $$
# \mathbb{E}[\text{dropout}(a)] = (1 - p) \cdot \frac{a}{1 - p} + p \cdot 0 = a
# $$
#
# With $p = 0.5$ the survivors are doubled. Here it is on a matrix of ones:

# %% nondeterministic="which entries dropout zeroes depends on the PyTorch version and platform; the next cell checks the rule instead"
torch.manual_seed(123)
dropout = torch.nn.Dropout(0.5)
example = torch.ones(6, 6)
dropped = dropout(example)
print(dropped)

# %% [markdown]
# > **Your pattern may differ.** Which entries are zeroed depends on how your PyTorch
# > version and platform draw random numbers, so the book's printout and yours may show
# > different patterns even with the same seed. What must hold everywhere is the rule: every entry is 0 or $1 / (1 - p) = 2$,
# > and about half are 0.

# %%
kept = dropped != 0
fraction_zeroed = 1 - kept.float().mean().item()
print("every entry is 0 or 2:", set(dropped.unique().tolist()) <= {0.0, 2.0})
print("survivors are exactly 1 / (1 - p) = 2:", bool((dropped[kept] == 2.0).all()))
# With 36 entries, the zeroed fraction is 0.5 give or take 0.08 (one standard deviation).
print("between a quarter and three quarters zeroed:", 0.25 <= fraction_zeroed <= 0.75)
# Out:
# every entry is 0 or 2: True
# survivors are exactly 1 / (1 - p) = 2: True
# between a quarter and three quarters zeroed: True

# %% [markdown]
# Applied to the causal weights, dropout removes some connections; the remaining weights
# are doubled, so the rows no longer sum to 1 but keep that sum on average.

# %% nondeterministic="a dropout pattern again: it depends on the PyTorch version and platform"
torch.manual_seed(123)
dropped_weights = dropout(attn_weights)
print(dropped_weights)

# %%
show_attention(
    dropped_weights,
    tokens,
    caption="Figure 4. The causal weights after dropout with p = 0.5 (survivors doubled).",
    alt=(
        "Heatmap of the causal attention weights after dropout with rate 0.5. Besides the "
        "zeros above the diagonal, dropout has zeroed some of the remaining entries at "
        "random, and each surviving weight is twice its value in Figure 3."
    ),
)
# Out:
# AttentionFigure('Figure 4. The causal weights after dropout with p = 0.5 (survivors doubled).')

# %% [markdown]
# ## 3.5.3 Implementing a compact causal attention class
#
# Real inputs come in batches. Stacking the sentence twice gives a batch of shape
# `(batch, num_tokens, d_in)`:

# %%
batch = torch.stack((inputs, inputs), dim=0)
print(batch.shape)
# Out:
# torch.Size([2, 6, 3])

# %% [markdown]
# [`CausalAttention`][attention_mechanisms.causal.CausalAttention] combines everything on
# this page: `nn.Linear` projections, the $-\infty$ mask, scaling, softmax and dropout on the
# weights. Here it is as the package ships it; the cell defines it in this notebook (the
# first cell imports what it needs), so you can edit it and run the cells after it again:

# %% include="attention_mechanisms.causal.CausalAttention"

# %% [markdown]
# Line by line, against the steps above:
#
# - `__init__` creates the three projections in the order query, key, value, then
#   `self.dropout = nn.Dropout(...)`, and registers the mask
#   `torch.triu(torch.ones(context_length, context_length), diagonal=1)` as a buffer (see
#   below). `context_length` is the longest sequence the module will ever see.
# - `forward` checks `x` and reads `num_tokens`, the book's `b, num_tokens, d_in = x.shape`
#   written so that one sequence `(T, d_in)` works too.
# - `keys`, `queries`, `values`: the three projections.
# - `attn_scores = queries @ keys.transpose(-2, -1)`: the book's `transpose(1, 2)` for a
#   batch, which swaps the token and feature dimensions of each sequence.
# - `attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)`: the
#   top-left corner of the mask, for inputs shorter than `context_length`; the trailing `_`
#   fills in place. The diagonal is never hidden, so no row is all $-\infty$.
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`, then
#   `attn_weights = self.dropout(attn_weights)`, which zeroes weights only in training mode.
# - `context_vec = attn_weights @ values`: `(b, num_tokens, d_out)`.
#
# On the batch, with `dropout=0.0`, the two copies of the sentence give the same context
# vectors, and the first token's row depends on the first token only:

# %%
torch.manual_seed(123)
context_length = batch.shape[1]
ca = CausalAttention(d_in=3, d_out=2, context_length=context_length, dropout=0.0)
context_vecs = ca(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
# Out:
# tensor([[[-0.4519,  0.2216],
#          [-0.5874,  0.0058],
#          [-0.6300, -0.0632],
#          [-0.5675, -0.0843],
#          [-0.5526, -0.0981],
#          [-0.5299, -0.1081]],
#
#         [[-0.4519,  0.2216],
#          [-0.5874,  0.0058],
#          [-0.6300, -0.0632],
#          [-0.5675, -0.0843],
#          [-0.5526, -0.0981],
#          [-0.5299, -0.1081]]], grad_fn=<UnsafeViewBackward0>)
# context_vecs.shape: torch.Size([2, 6, 2])

# %% [markdown]
# ### Why the mask is a buffer
#
# The class stores its mask with `self.register_buffer("mask", ...)` instead of as a plain
# attribute `self.mask = ...`. A buffer is part of the module's state without being a
# trainable parameter, and that has two consequences:
#
# 1. **It moves with the module.** `model.to("cuda")` or `model.to(torch.float64)` moves
#    parameters *and* buffers; a plain attribute would stay behind on the CPU, and the first
#    forward pass on the GPU would fail with a device mismatch.
# 2. **It is saved and loaded.** `state_dict()` includes buffers, so a checkpoint carries the
#    mask with it.
#
# Both are easy to see without a GPU:

# %%
print("parameters:", [name for name, _ in ca.named_parameters()])
print("buffers:   ", [name for name, _ in ca.named_buffers()])
print("state_dict:", list(ca.state_dict()))
# Out:
# parameters: ['W_query.weight', 'W_key.weight', 'W_value.weight']
# buffers:    ['mask']
# state_dict: ['mask', 'W_query.weight', 'W_key.weight', 'W_value.weight']

# %%
ca64 = CausalAttention(3, 2, context_length, 0.0).to(torch.float64)
print("mask dtype after .to(torch.float64):", ca64.mask.dtype)
ca_meta = CausalAttention(3, 2, context_length, 0.0).to("meta")  # a device without data
print("mask device after .to('meta'):", ca_meta.mask.device)
# Out:
# mask dtype after .to(torch.float64): torch.float64
# mask device after .to('meta'): meta

# %% [markdown]
# The [Pitfalls](pitfalls.py) page shows what goes wrong with a plain attribute. Next, we
# run several causal attention heads side by side:
# [multi-head attention](05-multi-head-attention.py).
#
# Stage 3.5 of the [Playground](playground.md) shows the masked weights of 3.5.1; the
# hidden cells stay hidden whatever you type.
