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
# element-wise products. A dot product is large when two vectors point in similar
# directions, so it works as a measure of similarity.

# %%
query = inputs[1]  # "journey", x^(2)

attn_scores_2 = torch.empty(inputs.shape[0])
for j, x_j in enumerate(inputs):
    attn_scores_2[j] = torch.dot(query, x_j)  # omega_2j
print(attn_scores_2)

# %% [markdown]
# The package's [`query_scores_loop`][attention_mechanisms.simple.query_scores_loop] is the
# same loop, and gives the same numbers:

# %%
print(query_scores_loop(query, inputs))

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

# %% [markdown]
# The last step multiplies each input vector by its weight and adds them up:
# $z^{(2)} = \sum_j \alpha_{2j} x^{(j)}$.

# %%
context_vec_2 = torch.zeros(query.shape)
for j, x_j in enumerate(inputs):
    context_vec_2 += attn_weights_2[j] * x_j
print(context_vec_2)

# %% [markdown]
# [`context_vector`][attention_mechanisms.simple.context_vector] packages that loop:

# %%
print(context_vector(attn_weights_2, inputs))

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

# %% [markdown]
# Entry $(i, j)$ is the dot product of row $i$ with row $j$, which is exactly what the
# matrix product $X X^\top$ computes, in one call and much faster:

# %%
attn_scores = inputs @ inputs.T
print(attn_scores)
print(torch.allclose(attn_scores, attention_scores_loop(inputs)))

# %% [markdown]
# Softmax along each row (`dim=-1`, the last dimension) turns the scores into weights; each
# row sums to 1:

# %%
attn_weights = torch.softmax(attn_scores, dim=-1)
print(attn_weights)
print("row sums:", attn_weights.sum(dim=-1))

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
        "between 0.10 and 0.24; journey and starts attend most to each other and to "
        "themselves, about 0.23 each."
    ),
)

# %% [markdown]
# Finally, all context vectors at once: row $i$ of $A X$ is $\sum_j \alpha_{ij} x^{(j)}$,
# the loop above for query $i$.

# %%
all_context_vecs = attn_weights @ inputs
print(all_context_vecs)

# %% [markdown]
# The second row, $z^{(2)}$, is the context vector we computed with a loop in 3.3.1. The
# package gives the same matrix, step by step or in one call:

# %%
print(context_vectors(attention_weights(attention_scores(inputs)), inputs))

# %% [markdown]
# Nothing here was learned: the weights come straight from the embeddings. The next page
# gives the model three trainable matrices, so that it can learn *what* to attend to.
