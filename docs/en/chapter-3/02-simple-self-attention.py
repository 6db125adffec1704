# %% [markdown]
# # Simplified self-attention
#
# Book section 3.3: attending to different parts of the input with self-attention, first
# without any trainable weights, so that every number can be followed by hand.
#
# The goal of self-attention is to compute, for every token $x^{(i)}$, a **context vector**
# $z^{(i)}$: a mix of all the input vectors, weighted by how relevant each one is to token
# $i$. We build it in three steps:
#
# 1. **attention scores** $\omega_{ij}$: how similar token $j$ is to token $i$;
# 2. **attention weights** $\alpha_{ij}$: the scores normalised so that each row sums to 1;
# 3. **context vectors** $z^{(i)} = \sum_j \alpha_{ij} x^{(j)}$.

# %%
import torch

from attention_mechanisms import (
    attention_scores,
    attention_scores_loop,
    attention_weights,
    context_vector,
    context_vectors,
    query_scores_loop,
    softmax_stable,
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
# ## 3.3.1 A simple self-attention mechanism without trainable weights
#
# Take the second token, "journey", as the **query**. Its attention score with each token
# $x^{(j)}$ is the dot product $\omega_{2j} = x^{(2)} \cdot x^{(j)}$: the sum of the
# element-wise products. A dot product is large when two vectors are long and point in
# similar directions; for vectors of similar length, it measures how alike they are.

# %%
query = inputs[1]  # "journey", x^(2)

attn_scores_2 = torch.empty(inputs.shape[0])
for j, x_j in enumerate(inputs):
    attn_scores_2[j] = torch.dot(query, x_j)  # omega_2j
print(attn_scores_2)
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# The package's [`query_scores_loop`][attention_mechanisms.simple.query_scores_loop] is the
# same loop, and gives the same numbers:

# %%
print(query_scores_loop(query, inputs))
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# "journey" scores highest with itself (1.4950) and with "starts" (1.4754), whose embedding
# is almost the same.
#
# The scores do not sum to anything in particular. The first idea for turning them into
# weights is to divide by their sum:

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
print("Attention weights:", attn_weights_2_tmp)
print("Sum:", attn_weights_2_tmp.sum())
# Out:
# Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
# Sum: tensor(1.0000)

# %% [markdown]
# That sums to 1, but it would turn a negative score into a negative weight. The **softmax**
# function is the standard choice instead:
#
# $$
# \alpha_{2j} = \operatorname{softmax}(\omega_2)_j = \frac{e^{\omega_{2j}}}{\sum_k e^{\omega_{2k}}}
# $$
#
# Every weight is positive, they sum to 1, and larger scores get disproportionately more
# weight. Written exactly as the formula, it is a one-liner:


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


attn_weights_2_naive = softmax_naive(attn_scores_2)
print("Attention weights:", attn_weights_2_naive)
print("Sum:", attn_weights_2_naive.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# ### Where the naive softmax breaks
#
# $e^x$ grows fast. In float32 the largest number is about $3.4 \times 10^{38}$, and
# $e^{89}$ is already larger. Then numerator and denominator are both infinite, and
# $\infty / \infty$ is "not a number":

# %%
big_scores = torch.tensor([100.0, 1.0, 0.0])
print("naive: ", softmax_naive(big_scores))
print("stable:", softmax_stable(big_scores))
print("torch: ", torch.softmax(big_scores, dim=0))
# Out:
# naive:  tensor([nan, 0., 0.])
# stable: tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])
# torch:  tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])

# %% [markdown]
# The stable version subtracts the largest score $m$ before exponentiating. The factor
# $e^{-m}$ cancels between numerator and denominator, so the result is unchanged, but now
# every exponent is at most 0:
#
# $$
# \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k
# $$
#
# `torch.softmax` does this internally, and so do
# [`softmax_stable`][attention_mechanisms.simple.softmax_stable] and everything else in the
# package. Use `torch.softmax` in your own code:

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
print("Attention weights:", attn_weights_2)
print("Sum:", attn_weights_2.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# The last step multiplies each input vector by its weight and adds them up:
# $z^{(2)} = \sum_j \alpha_{2j} x^{(j)}$.

# %%
context_vec_2 = torch.zeros(query.shape)
for j, x_j in enumerate(inputs):
    context_vec_2 += attn_weights_2[j] * x_j
print(context_vec_2)
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# [`context_vector`][attention_mechanisms.simple.context_vector] packages that loop:

# %%
print(context_vector(attn_weights_2, inputs))
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# ## 3.3.2 Computing attention weights for all input tokens
#
# Now every token takes a turn as the query. With two loops, the scores form a $6 \times 6$
# matrix whose row $i$ holds the scores of query $i$:

# %%
attn_scores = torch.empty(6, 6)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores[i, j] = torch.dot(x_i, x_j)
print(attn_scores)
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])

# %% [markdown]
# Entry $(i, j)$ is the dot product of row $i$ with row $j$, which is exactly what the
# matrix product $X X^\top$ computes, in one call and much faster:

# %%
attn_scores = inputs @ inputs.T
print(attn_scores)
print(torch.allclose(attn_scores, attention_scores_loop(inputs)))
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])
# True

# %% [markdown]
# Softmax along each row (`dim=-1`, the last dimension) turns the scores into weights; each
# row sums to 1:

# %%
attn_weights = torch.softmax(attn_scores, dim=-1)
print(attn_weights)
print("row sums:", attn_weights.sum(dim=-1))
# Out:
# tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
#         [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
#         [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
#         [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
#         [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
#         [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
# row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])

# %% [markdown]
# The picture shows the same matrix. Each row is one query; darker cells are the tokens it
# draws the most from.

# %%
show_attention(
    attn_weights,
    tokens,
    caption="Figure 1. Attention weights of simplified self-attention (no trainable weights).",
    alt=(
        "Heatmap of a 6 by 6 matrix of attention weights between the tokens Your, journey, "
        "starts, with, one, step. Every row sums to 1. Weights are spread fairly evenly, "
        "from 0.099 to 0.238; journey and starts attend most to each other and to "
        "themselves, 0.233 to 0.238 each."
    ),
)
# Out:
# AttentionFigure('Figure 1. Attention weights of simplified self-attention (no trainable weights).')

# %% [markdown]
# Finally, all context vectors at once: row $i$ of $A X$ is $\sum_j \alpha_{ij} x^{(j)}$,
# the loop above for query $i$.

# %%
all_context_vecs = attn_weights @ inputs
print(all_context_vecs)
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# The second row, $z^{(2)}$, is the context vector we computed with a loop in 3.3.1. The
# package gives the same matrix, step by step or in one call:

# %%
print(context_vectors(attention_weights(attention_scores(inputs)), inputs))
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# Nothing here was learned: the weights come straight from the embeddings. The next page
# gives the model three trainable matrices, so that it can learn *what* to attend to.
#
# To change the embeddings and watch these scores, weights and context vectors follow, open
# the [Playground](playground.md) at stage 3.3.
