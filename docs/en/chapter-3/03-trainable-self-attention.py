# %% [markdown]
# # Self-attention with trainable weights
#
# Book section 3.4: the **scaled dot-product attention** used in GPT and most other
# transformers. It adds three weight matrices that the model learns during training:
# $W_q$, $W_k$ and $W_v$.
#
# Each input $x^{(i)}$ is projected three times:
#
# - its **query** $q^{(i)} = x^{(i)} W_q$: what this token is looking for;
# - its **key** $k^{(i)} = x^{(i)} W_k$: what this token offers to be found by;
# - its **value** $v^{(i)} = x^{(i)} W_v$: what this token passes on once it is attended to.
#
# Scores now compare queries with keys, $\omega_{ij} = q^{(i)} \cdot k^{(j)}$, and context
# vectors mix values instead of raw inputs.

# %%
import torch
from torch import nn

from attention_mechanisms import SelfAttention_v1, SelfAttention_v2
from attention_mechanisms.checks import check_like_parameters, check_size, check_tokens
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
# ## 3.4.1 Computing the attention weights step by step
#
# Again we follow the second token, "journey". The input size is 3; the book picks an output
# size of 2 so that the numbers stay small (GPT models use the same size for both).

# %%
x_2 = inputs[1]
d_in = inputs.shape[1]  # 3
d_out = 2

torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)

# %% [markdown]
# `requires_grad=False` only keeps the printouts short; a model being trained leaves it on.
# The query, key and value of "journey" are three projections of the same vector:

# %%
query_2 = x_2 @ W_query
key_2 = x_2 @ W_key
value_2 = x_2 @ W_value
print("query:", query_2)
print("key:  ", key_2)
print("value:", value_2)
# Out:
# query: tensor([0.4306, 1.4551])
# key:   tensor([0.4433, 1.1419])
# value: tensor([0.3951, 1.0037])

# %% [markdown]
# To score "journey" against every token we need every token's key, and later every value.
# One matrix product each projects all six tokens:

# %%
keys = inputs @ W_key  # (6, 2)
values = inputs @ W_value  # (6, 2)
print("keys.shape:  ", keys.shape)
print("values.shape:", values.shape)
# Out:
# keys.shape:   torch.Size([6, 2])
# values.shape: torch.Size([6, 2])

# %% [markdown]
# The score of "journey" with itself is the dot product of its query and its own key,
# $\omega_{22} = q^{(2)} \cdot k^{(2)}$:

# %%
attn_score_22 = query_2.dot(keys[1])
print(attn_score_22)
# Out:
# tensor(1.8524)

# %% [markdown]
# and all six scores of query 2 are one vector-matrix product, $\omega_2 = q^{(2)} K^\top$:

# %%
attn_scores_2 = query_2 @ keys.T
print(attn_scores_2)
# Out:
# tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])

# %% [markdown]
# ### Why the scores are scaled
#
# Before the softmax, the scores are divided by $\sqrt{d_k}$, the square root of the key
# size:
#
# $$
# \alpha_{2j} = \operatorname{softmax}\left(\frac{\omega_2}{\sqrt{d_k}}\right)_j
# $$
#
# A dot product of two $d_k$-dimensional vectors adds up $d_k$ terms, so its spread grows
# with $d_k$. Large scores push softmax towards a one-hot vector, where its gradients are
# almost zero and training stalls. Dividing by $\sqrt{d_k}$ keeps the spread of the scores
# roughly independent of the size, and gives the method its name: *scaled* dot-product
# attention.

# %%
d_k = keys.shape[-1]
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
print(attn_weights_2)
# Out:
# tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])

# %% [markdown]
# Finally the context vector of "journey" is the weighted sum of the values,
# $z^{(2)} = \sum_j \alpha_{2j} v^{(j)}$:

# %%
context_vec_2 = attn_weights_2 @ values
print(context_vec_2)
# Out:
# tensor([0.3061, 0.8210])

# %% [markdown]
# ## 3.4.2 Implementing a compact self-attention Python class
#
# The steps above, for every token at once, make a class. This is the package's
# [`SelfAttention_v1`][attention_mechanisms.self_attention.SelfAttention_v1], exactly as it
# ships; the cell defines it in this notebook, so you can edit it and run the cells after it
# again. It computes
#
# $$
# Z = \operatorname{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,
# \qquad Q = X W_q,\; K = X W_k,\; V = X W_v
# $$

# %% include="attention_mechanisms.self_attention.SelfAttention_v1"

# %% [markdown]
# Line by line:
#
# - `__init__` checks that both sizes are positive ints (`check_size`), then creates
#   `W_query`, `W_key` and `W_value` as `nn.Parameter(torch.rand(d_in, d_out))`, in that
#   order: the same three draws as in 3.4.1, so the same seed gives the same matrices.
#   `nn.Parameter` registers each matrix with the module, so `parameters()` and
#   `state_dict()` see it.
# - `forward` first checks `x`: a floating-point `(T, d_in)`, or a batch `(b, T, d_in)`
#   (`check_tokens`), in the weights' dtype and on their device (`check_like_parameters`).
# - `keys = x @ self.W_key`, and likewise the queries and values: one row per token, the
#   matrix form of `x_2 @ W_key`.
# - `attn_scores = queries @ keys.mT`: every $\omega_{ij}$ at once. `.mT` transposes the
#   last two dimensions, which for one sequence is the book's `keys.T`.
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`: scaled by
#   $\sqrt{d_k}$ and normalised over the keys, each row summing to 1.
# - `context_vec = attn_weights @ values`: row $i$ is $z^{(i)}$.
#
# With the same seed as in 3.4.1, its second row is the context vector we computed by hand:

# %%
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in, d_out)
print(sa_v1(inputs))
# Out:
# tensor([[0.2996, 0.8053],
#         [0.3061, 0.8210],
#         [0.3058, 0.8203],
#         [0.2948, 0.7939],
#         [0.2927, 0.7891],
#         [0.2990, 0.8040]], grad_fn=<MmBackward0>)

# %% [markdown]
# [`SelfAttention_v2`][attention_mechanisms.self_attention.SelfAttention_v2] replaces the
# hand-made matrices with `nn.Linear` layers, without bias unless `qkv_bias=True`:

# %% include="attention_mechanisms.self_attention.SelfAttention_v2"

# %% [markdown]
# Only two things change. In `__init__`, each projection is an `nn.Linear(d_in, d_out)`,
# which computes the same matrix product, but starts from a better initialisation than
# `torch.rand`, which helps training. In `forward`, `self.W_key(x)` calls the layer instead
# of `x @ self.W_key`. The rest, scores, scaling, softmax and the weighted sum, is line for
# line the same. Its weights are different random numbers, so its outputs differ:

# %%
torch.manual_seed(789)
sa_v2 = SelfAttention_v2(d_in, d_out)
print(sa_v2(inputs))
# Out:
# tensor([[-0.0739,  0.0713],
#         [-0.0748,  0.0703],
#         [-0.0749,  0.0702],
#         [-0.0760,  0.0685],
#         [-0.0763,  0.0679],
#         [-0.0754,  0.0693]], grad_fn=<MmBackward0>)

# %% [markdown]
# These are the attention weights behind that output, row by row:

# %%
with torch.no_grad():
    queries, keys = sa_v2.W_query(inputs), sa_v2.W_key(inputs)
    weights_v2 = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
show_attention(
    weights_v2,
    tokens,
    caption="Figure 2. Attention weights of SelfAttention_v2 after torch.manual_seed(789).",
    alt=(
        "Heatmap of the 6 by 6 attention weights of SelfAttention_v2 with untrained random "
        "weights. All weights lie between 0.14 and 0.21, so every token attends to all six "
        "tokens almost equally; the column for Your is slightly darker than the others."
    ),
)
# Out:
# AttentionFigure('Figure 2. Attention weights of SelfAttention_v2 after torch.manual_seed(789).')

# %% [markdown]
# Untrained weights give nearly uniform attention: nothing has been learned yet about which
# tokens matter to which.
#
# ### Copying weights from v2 to v1
#
# The two classes compute the same function. `nn.Linear(d_in, d_out)` stores its weight as a
# `(d_out, d_in)` matrix and computes `x @ weight.T`, so copying the **transposed** weights
# of v2 into v1 must make their outputs equal:

# %%
print(nn.Linear(3, 2, bias=False).weight.shape)  # (d_out, d_in): stored transposed
# Out:
# torch.Size([2, 3])

# %%
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in, d_out)
sa_v2 = SelfAttention_v2(d_in, d_out)

with torch.no_grad():
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)

print(sa_v1(inputs))
print(sa_v2(inputs))
print("equal:", torch.allclose(sa_v1(inputs), sa_v2(inputs)))
# Out:
# tensor([[0.5085, 0.3508],
#         [0.5084, 0.3508],
#         [0.5084, 0.3506],
#         [0.5074, 0.3471],
#         [0.5076, 0.3446],
#         [0.5077, 0.3493]], grad_fn=<MmBackward0>)
# tensor([[0.5085, 0.3508],
#         [0.5084, 0.3508],
#         [0.5084, 0.3506],
#         [0.5074, 0.3471],
#         [0.5076, 0.3446],
#         [0.5077, 0.3493]], grad_fn=<MmBackward0>)
# equal: True

# %% [markdown]
# Both classes let every token look at every other token, including the ones that come after
# it. A model that generates text one token at a time cannot be allowed to do that; the
# [next page](04-causal-attention.py) hides the future.
#
# Stage 3.4 of the [Playground](playground.md) starts from the weights that seed 789 gives
# `SelfAttention_v2`: change the embeddings there and watch the weights follow.
