# %% [markdown]
# # Exercises
#
# The three exercises of chapter 3. Try each one before you unfold its solution; every
# solution below was executed when this page was built.

# %%
import torch

from attention_mechanisms import (
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
)

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
batch = torch.stack((inputs, inputs), dim=0)

# %% [markdown]
# ## Exercise 3.1: Comparing SelfAttention_v1 and SelfAttention_v2
#
# `nn.Linear` in `SelfAttention_v2` uses a different weight initialisation from the
# `torch.rand` of `SelfAttention_v1`, so the two print different outputs for the same input.
# Show that they are nevertheless the same function: give a `SelfAttention_v1` the weights
# of a `SelfAttention_v2` and compare the outputs.
#
# *Hint:* `nn.Linear` stores its weight matrix transposed.

# %% tags=["solution"]
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in=3, d_out=2)
sa_v2 = SelfAttention_v2(d_in=3, d_out=2)

with torch.no_grad():
    # nn.Linear keeps a (d_out, d_in) weight and computes x @ weight.T
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)

print(sa_v1(inputs))
print(sa_v2(inputs))
print("same outputs:", torch.allclose(sa_v1(inputs), sa_v2(inputs)))
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
# same outputs: True

# %% [markdown]
# ## Exercise 3.2: Returning two-dimensional embedding vectors
#
# Change the arguments of `MultiHeadAttentionWrapper(..., num_heads=2)` so that the output
# context vectors are 2-dimensional instead of 4-dimensional, keeping `num_heads=2`.
#
# *Hint:* you do not have to change the class.

# %% tags=["solution"]
# The output size is d_out * num_heads, so two heads of size 1 give 2 features.
torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in=3, d_out=1, context_length=6, dropout=0.0, num_heads=2)
context_vecs = mha(batch)
print(context_vecs.shape)
# Out:
# torch.Size([2, 6, 2])

# %% [markdown]
# ## Exercise 3.3: Initialising GPT-2-size attention modules
#
# Using `MultiHeadAttention`, create a module with the sizes of the smallest GPT-2 model:
# 12 heads, input and output embeddings of 768 dimensions, and a context length of 1,024
# tokens. How many parameters does it have?

# %% tags=["solution"]
gpt2_mha = MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters")

x = torch.randn(1, 1024, 768)  # one full-length sequence
print(gpt2_mha(x).shape)
# Out:
# 2,360,064 parameters
# torch.Size([1, 1024, 768])

# %% [markdown] tags=["solution"]
# The three projections have $768 \times 768$ weights each and no bias (`qkv_bias=False`),
# and `out_proj` has $768 \times 768$ weights plus 768 biases:
# $4 \times 768^2 + 768 = 2{,}360{,}064$. The `mask` buffer ($1024 \times 1024$) is not a
# parameter. GPT-2 itself uses `qkv_bias=True`, which adds $3 \times 768$ more.
