# %% [markdown]
# # Multi-head attention
#
# Book section 3.6: extending single-head attention to multi-head attention. One causal
# attention module learns one way of relating tokens to each other. **Multi-head attention**
# runs several of them, the *heads*, in parallel, each with its own weights, so that each
# can learn a different kind of relation (which word a pronoun refers to, which verb goes
# with which subject, ...). Their outputs are joined into one vector per token.

# %%
import torch
from torch import nn

from attention_mechanisms import (
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    scaled_dot_product_attention,
)
from attention_mechanisms.checks import (
    check_dropout,
    check_heads,
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
batch = torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)

# %% [markdown]
# ## 3.6.1 Stacking multiple single-head attention layers
#
# The most literal version keeps a list of `CausalAttention` modules and concatenates their
# outputs along the last dimension:
#
# $$
# \operatorname{MultiHead}(X) = \left[\operatorname{head}_1(X) \,\|\, \operatorname{head}_2(X)
# \,\|\, \cdots \,\|\, \operatorname{head}_h(X)\right]
# $$
#
# That is [`MultiHeadAttentionWrapper`][attention_mechanisms.multihead.MultiHeadAttentionWrapper],
# as the package ships it (the cell defines it here, so you can edit it and run on):

# %% include="attention_mechanisms.multihead.MultiHeadAttentionWrapper"

# %% [markdown]
# `__init__` builds `num_heads` independent `CausalAttention` modules, each with its own
# projections, and keeps them in an `nn.ModuleList` so that their parameters belong to the
# wrapper. `forward` runs them one after the other on the same `x` and joins their outputs
# with `torch.cat(..., dim=-1)`. With two heads of `d_out=2` each, every token gets
# $2 \times 2 = 4$ output features:

# %%
torch.manual_seed(123)
context_length = batch.shape[1]  # 6 tokens
d_in, d_out = 3, 2
mha = MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout=0.0, num_heads=2)

context_vecs = mha(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
# Out:
# tensor([[[-0.4519,  0.2216,  0.4772,  0.1063],
#          [-0.5874,  0.0058,  0.5891,  0.3257],
#          [-0.6300, -0.0632,  0.6202,  0.3860],
#          [-0.5675, -0.0843,  0.5478,  0.3589],
#          [-0.5526, -0.0981,  0.5321,  0.3428],
#          [-0.5299, -0.1081,  0.5077,  0.3493]],
#
#         [[-0.4519,  0.2216,  0.4772,  0.1063],
#          [-0.5874,  0.0058,  0.5891,  0.3257],
#          [-0.6300, -0.0632,  0.6202,  0.3860],
#          [-0.5675, -0.0843,  0.5478,  0.3589],
#          [-0.5526, -0.0981,  0.5321,  0.3428],
#          [-0.5299, -0.1081,  0.5077,  0.3493]]], grad_fn=<CatBackward0>)
# context_vecs.shape: torch.Size([2, 6, 4])

# %% [markdown]
# The first two columns come from the first head, the last two from the second. Both
# sentences in the batch are the same, so both halves of the output are the same too.
#
# Each head has its own attention pattern. The weights are not returned by the modules, but
# each head's projections are there to recompute them:

# %%
with torch.no_grad():
    head_weights = torch.stack(
        [
            scaled_dot_product_attention(
                head.W_query(inputs), head.W_key(inputs), head.W_value(inputs), causal=True
            )[1]
            for head in mha.heads
        ]
    )  # (num_heads, 6, 6)
show_attention(
    head_weights,
    tokens,
    caption="Figure 5. Causal attention weights of the two heads of MultiHeadAttentionWrapper.",
    alt=(
        "Two heatmaps side by side, one per head, each a 6 by 6 lower-triangular matrix of "
        "causal attention weights over the tokens Your, journey, starts, with, one, step. "
        "The two heads, which have different random weights, spread their attention "
        "differently over the earlier tokens."
    ),
)
# Out:
# AttentionFigure('Figure 5. Causal attention weights of the two heads of MultiHeadAttentionWrapper.')

# %% [markdown]
# ### Choosing the output size
#
# The wrapper's output size is `d_out * num_heads`. To get 2-dimensional context vectors
# from two heads, give each head `d_out=1` (this is also the book's Exercise 3.2):

# %%
mha_small = MultiHeadAttentionWrapper(d_in, 1, context_length, dropout=0.0, num_heads=2)
print(mha_small(batch))
# Out:
# tensor([[[0.0189, 0.2729],
#          [0.2181, 0.3037],
#          [0.2804, 0.3125],
#          [0.2830, 0.2793],
#          [0.2476, 0.2541],
#          [0.2748, 0.2513]],
#
#         [[0.0189, 0.2729],
#          [0.2181, 0.3037],
#          [0.2804, 0.3125],
#          [0.2830, 0.2793],
#          [0.2476, 0.2541],
#          [0.2748, 0.2513]]], grad_fn=<CatBackward0>)

# %% [markdown]
# ## 3.6.2 Implementing multi-head attention with weight splits
#
# The wrapper runs its heads one after the other, each with three small matrix products.
# [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention] computes all
# heads at once:
#
# 1. One `nn.Linear(d_in, d_out)` per role projects the queries (keys, values) of **all**
#    heads in a single product.
# 2. The last dimension, `d_out`, is **split** into `num_heads` pieces of
#    `head_dim = d_out // num_heads`, one per head, with `.view`.
# 3. `.transpose(1, 2)` moves the head dimension in front of the tokens, so the tensors
#    have shape `(b, num_heads, num_tokens, head_dim)`.
# 4. One batched matrix product computes the attention of every head.
# 5. The heads are put back side by side (`.transpose`, `.contiguous`, `.view`) and an
#    output projection `out_proj` mixes them.
#
# ### Tracing the reshapes on a tiny tensor
#
# Take one sentence (`b = 1`) of three tokens, with `d_out = 4` split into two heads of
# size 2. The numbers 0 to 11 make it easy to follow where each value goes:

# %%
b, num_tokens, num_heads, head_dim = 1, 3, 2, 2
projected = torch.arange(12.0).reshape(b, num_tokens, num_heads * head_dim)
print(projected)  # (b, num_tokens, d_out): one row per token
# Out:
# tensor([[[ 0.,  1.,  2.,  3.],
#          [ 4.,  5.,  6.,  7.],
#          [ 8.,  9., 10., 11.]]])

# %%
split = projected.view(b, num_tokens, num_heads, head_dim)
print(split)  # (b, num_tokens, num_heads, head_dim): each row cut into two heads
# Out:
# tensor([[[[ 0.,  1.],
#           [ 2.,  3.]],
#
#          [[ 4.,  5.],
#           [ 6.,  7.]],
#
#          [[ 8.,  9.],
#           [10., 11.]]]])

# %%
per_head = split.transpose(1, 2)
print(per_head)  # (b, num_heads, num_tokens, head_dim): head 0's tokens, then head 1's
# Out:
# tensor([[[[ 0.,  1.],
#           [ 4.,  5.],
#           [ 8.,  9.]],
#
#          [[ 2.,  3.],
#           [ 6.,  7.],
#           [10., 11.]]]])

# %% [markdown]
# `view` never moves data: it reinterprets the same memory with a new shape. `transpose`
# doesn't move data either; it only swaps two *strides*, so the tensor is no longer stored
# row by row:

# %%
print("contiguous after view:     ", split.is_contiguous(), split.stride())
print("contiguous after transpose:", per_head.is_contiguous(), per_head.stride())
# Out:
# contiguous after view:      True (12, 4, 2, 1)
# contiguous after transpose: False (12, 2, 4, 1)

# %% [markdown]
# To join the heads again we transpose back and flatten the last two dimensions. Because
# the transposed tensor is not stored row by row, we call `.contiguous()` before `view`; it
# copies the data into the new order (the [Pitfalls](pitfalls.py) show the error you get
# without it):

# %%
merged = per_head.transpose(1, 2).contiguous().view(b, num_tokens, num_heads * head_dim)
print(merged)
print("round trip is exact:", torch.equal(merged, projected))
# Out:
# tensor([[[ 0.,  1.,  2.,  3.],
#          [ 4.,  5.,  6.,  7.],
#          [ 8.,  9., 10., 11.]]])
# round trip is exact: True

# %% [markdown]
# ### Batched matrix multiplication
#
# `@` on tensors with more than two dimensions multiplies the **last two** dimensions and
# treats all the others as a batch. This tensor has shape
# `(b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4)`:

# %%
a = torch.tensor(
    [
        [
            [
                [0.2745, 0.6584, 0.2775, 0.8573],
                [0.8993, 0.0390, 0.9268, 0.7388],
                [0.7179, 0.7058, 0.9156, 0.4340],
            ],
            [
                [0.0772, 0.3565, 0.1479, 0.5331],
                [0.4066, 0.2318, 0.4545, 0.9737],
                [0.4606, 0.5159, 0.4220, 0.5786],
            ],
        ]
    ]
)
print(a @ a.transpose(2, 3))
# Out:
# tensor([[[[1.3208, 1.1631, 1.2879],
#           [1.1631, 2.2150, 1.8424],
#           [1.2879, 1.8424, 2.0402]],
#
#          [[0.4391, 0.7003, 0.5903],
#           [0.7003, 1.3737, 1.0620],
#           [0.5903, 1.0620, 0.9912]]]])

# %% [markdown]
# That is one $3 \times 3$ product per head, computed in one call. Doing it head by head
# gives the same numbers:

# %%
first_head = a[0, 0, :, :]
second_head = a[0, 1, :, :]
print("first head:\n", first_head @ first_head.T)
print("second head:\n", second_head @ second_head.T)
# Out:
# first head:
#  tensor([[1.3208, 1.1631, 1.2879],
#         [1.1631, 2.2150, 1.8424],
#         [1.2879, 1.8424, 2.0402]])
# second head:
#  tensor([[0.4391, 0.7003, 0.5903],
#         [0.7003, 1.3737, 1.0620],
#         [0.5903, 1.0620, 0.9912]])

# %% [markdown]
# ### The class
#
# Putting it together gives the package's
# [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention], shown and
# defined here as it ships:

# %% include="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# Line by line, against the steps traced above:
#
# - `__init__` checks the sizes, with `head_dim = d_out // num_heads` (`check_heads`
#   refuses a `d_out` that does not split evenly), and creates `W_query`, `W_key`,
#   `W_value`, then `out_proj`, `dropout` and the `mask` buffer. That order of creation is
#   what makes `torch.manual_seed(123)` give the book's numbers.
# - `forward` treats one sequence as a batch of one, then reads `b, num_tokens`.
# - The three projections give `(b, num_tokens, d_out)`; `.view(b, num_tokens,
#   num_heads, head_dim)` splits the last dimension into heads, and `.transpose(1, 2)`
#   brings the heads forward: `(b, num_heads, num_tokens, head_dim)`.
# - `attn_scores = queries @ keys.transpose(2, 3)`: one batched product gives the scores of
#   every head, `(b, num_heads, num_tokens, num_tokens)`.
# - The mask, the scaled softmax and dropout are the lines of `CausalAttention`, applied to
#   every head at once.
# - `(attn_weights @ values).transpose(1, 2)` puts the tokens back in front;
#   `.contiguous().view(b, num_tokens, self.d_out)` joins the heads again, as the wrapper's
#   `torch.cat` did.
# - `self.out_proj(context_vec)` mixes the heads' outputs, a layer the wrapper does not have.
#
# With the book's seed and sizes (`d_out=2` split over two heads of size 1):

# %%
torch.manual_seed(123)
batch_size, context_length, d_in = batch.shape
d_out = 2
mha = MultiHeadAttention(d_in, d_out, context_length, dropout=0.0, num_heads=2)

context_vecs = mha(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
# Out:
# tensor([[[0.3190, 0.4858],
#          [0.2943, 0.3897],
#          [0.2856, 0.3593],
#          [0.2693, 0.3873],
#          [0.2639, 0.3928],
#          [0.2575, 0.4028]],
#
#         [[0.3190, 0.4858],
#          [0.2943, 0.3897],
#          [0.2856, 0.3593],
#          [0.2693, 0.3873],
#          [0.2639, 0.3928],
#          [0.2575, 0.4028]]], grad_fn=<ViewBackward0>)
# context_vecs.shape: torch.Size([2, 6, 2])

# %% [markdown]
# The output size is now `d_out` itself, whatever the number of heads. The per-head
# attention patterns can be recomputed from the split projections:

# %%
with torch.no_grad():
    split_shape = (6, mha.num_heads, mha.head_dim)
    q = mha.W_query(inputs).view(split_shape).transpose(0, 1)  # (num_heads, 6, head_dim)
    k = mha.W_key(inputs).view(split_shape).transpose(0, 1)
    v = mha.W_value(inputs).view(split_shape).transpose(0, 1)
    _, mha_weights = scaled_dot_product_attention(q, k, v, causal=True)  # (num_heads, 6, 6)
show_attention(
    mha_weights,
    tokens,
    caption="Figure 6. Causal attention weights of each head of MultiHeadAttention.",
    alt=(
        "Two heatmaps side by side, one per head of MultiHeadAttention, each a 6 by 6 "
        "lower-triangular matrix of causal attention weights. Each head has only one "
        "query and key feature, so its weights follow a different pattern from the other."
    ),
)
# Out:
# AttentionFigure('Figure 6. Causal attention weights of each head of MultiHeadAttention.')

# %% [markdown]
# ### At GPT-2's size
#
# The smallest GPT-2 model uses 768-dimensional embeddings, 12 heads and a context of 1,024
# tokens. Its multi-head attention then has $3 \times 768^2$ projection weights plus a
# $768 \times 768$ output projection with bias:

# %%
gpt2_mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters, head_dim = {gpt2_mha.head_dim}")
print(f"check: {3 * 768 * 768 + 768 * 768 + 768:,}")
# Out:
# 2,360,064 parameters, head_dim = 64
# check: 2,360,064

# %% [markdown]
# That is 2,360,064 parameters in one attention module; GPT-2 small has 12 of them, one per
# transformer block. The [summary](06-summary.md) puts the whole chapter on one page.
#
# Stage 3.6 of the [Playground](playground.md) shows the two heads of
# `MultiHeadAttentionWrapper` after `torch.manual_seed(123)` side by side, and their context
# vectors joined.
