# %% [markdown]
# # Pitfalls
#
# Mistakes that readers really make when they type in chapter 3, each with the error it
# really produces (this page was executed when the site was built). Some do not raise at all
# and silently compute something else; those are the dangerous ones.

# %%
import torch
from torch import nn

from attention_mechanisms import CausalAttention, softmax_stable

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
# ## view after transpose, without contiguous
#
# When `MultiHeadAttention` joins its heads, the context tensor has just been transposed.
# `transpose` only swaps strides, and `view` cannot reinterpret memory that is no longer
# laid out row by row:

# %% tags=["raises-exception"] raises="RuntimeError: view size is not compatible with input tensor's size and stride"
context = torch.randn(2, 3, 6, 4)  # (b, num_heads, num_tokens, head_dim)
context.transpose(1, 2).view(2, 6, 12)

# %% [markdown]
# **Fix:** `.transpose(1, 2).contiguous().view(2, 6, 12)`, or `.reshape(2, 6, 12)`, which
# copies only when it has to.

# %%
print(context.transpose(1, 2).contiguous().view(2, 6, 12).shape)
# Out:
# torch.Size([2, 6, 12])

# %% [markdown]
# ## Calling x.shape(-1)
#
# `shape` is an attribute (a `torch.Size`, which is a tuple), not a method. Calling it is a
# common slip when the size of the last dimension is needed for the scaling factor:

# %% tags=["raises-exception"] raises="TypeError: 'torch.Size' object is not callable"
query = torch.randn(6, 2)
d_k = query.shape(-1)

# %% [markdown]
# **Fix:** index it, `query.shape[-1]`, or call the method `query.size(-1)`.

# %%
print(query.shape[-1], query.size(-1))
# Out:
# 2 2

# %% [markdown]
# ## A trailing comma: self.d_out = d_out,
#
# A trailing comma makes a tuple. The assignment succeeds, and the error appears much later,
# in a line that looks correct:


# %% tags=["raises-exception"] raises="TypeError: view(): argument 'size' failed to unpack the object at pos 3"
class Tiny(nn.Module):
    def __init__(self, d_out):
        super().__init__()
        self.d_out = (d_out,)  # the comma makes this (2,)

    def forward(self, context):
        b, num_tokens = context.shape[:2]
        return context.contiguous().view(b, num_tokens, self.d_out)


print("self.d_out is", Tiny(2).d_out)
Tiny(2)(torch.randn(2, 6, 2))
# Out:
# self.d_out is (2,)

# %% [markdown]
# **Fix:** remove the comma. `print(type(self.d_out))` inside `__init__` finds it quickly.
#
# ## tril or triu: which positions does the mask mark?
#
# Two conventions meet in this chapter. The book's buffer marks positions to **hide**
# (`torch.triu(..., diagonal=1)`, ones above the diagonal). A `torch.tril(...)` matrix marks
# positions to **keep**. Use the keep mask where a hide mask belongs and nothing fails: the
# model simply attends to the future and ignores the past.

# %%
scores = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
hide = torch.triu(torch.ones(4, 4), diagonal=1).bool()  # correct: True = hide
keep = torch.tril(torch.ones(4, 4)).bool()  # True = keep

right = torch.softmax(scores.masked_fill(hide, -torch.inf), dim=-1)
wrong = torch.softmax(scores.masked_fill(keep, -torch.inf), dim=-1)  # the bug
print("right (lower triangle):\n", right)
print("wrong (future only, last row NaN):\n", wrong)
# Out:
# right (lower triangle):
#  tensor([[1.0000, 0.0000, 0.0000, 0.0000],
#         [0.5391, 0.4609, 0.0000, 0.0000],
#         [0.4478, 0.0917, 0.4604, 0.0000],
#         [0.1340, 0.4099, 0.3632, 0.0928]])
# wrong (future only, last row NaN):
#  tensor([[0.0000, 0.1813, 0.4468, 0.3719],
#         [0.0000, 0.0000, 0.8581, 0.1419],
#         [0.0000, 0.0000, 0.0000, 1.0000],
#         [   nan,    nan,    nan,    nan]])

# %% [markdown]
# The wrong version hides the diagonal and everything before it, so the first token
# attends only to the future, and the last token has nothing left at all: a row of
# `-inf` becomes NaN after softmax. A quick test catches it: the first row of causal
# weights must be $[1, 0, 0, \dots]$, and changing later tokens must not change earlier
# outputs. (PyTorch's own `scaled_dot_product_attention` takes a boolean **keep** mask,
# while `torch.nn.MultiheadAttention` takes a boolean **hide** mask; the package's
# functional form names its argument `hide_mask` so that it cannot be misread.)

# %% [markdown]
# ## A mask kept as a plain attribute
#
# Assigning the mask with `self.mask = ...` instead of `self.register_buffer("mask", ...)`
# works on the CPU, but the mask does not follow the module when it moves to another
# device. Here the module moves to PyTorch's `meta` device (a device without data, which
# stands in for a GPU on this CPU-only build machine); the mask stays behind:


# %% tags=["raises-exception"] raises="RuntimeError: Tensor on device meta is not on the expected device cpu"
class PlainMask(nn.Module):
    def __init__(self, d_in, d_out, context_length):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)

    def forward(self, x):
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        return scores.masked_fill(self.mask.bool(), -torch.inf)


plain = PlainMask(3, 2, 6).to("meta")
print("weights on", plain.W_query.weight.device, "- mask on", plain.mask.device)
plain(batch.to("meta"))
# Out:
# weights on meta - mask on cpu

# %% [markdown]
# The mask is also missing from the checkpoint, while a buffer is saved with it:

# %%
print("plain attribute:", list(PlainMask(3, 2, 6).state_dict()))
print("buffer:         ", list(CausalAttention(3, 2, 6, 0.0).state_dict()))
# Out:
# plain attribute: ['W_query.weight', 'W_key.weight']
# buffer:          ['mask', 'W_query.weight', 'W_key.weight', 'W_value.weight']

# %% [markdown]
# ## The naive softmax overflows
#
# $e^x$ exceeds the largest float32 number once $x > 88.7$. Scores that large are rare
# with scaling, but they do occur, and the naive formula then returns NaN:


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


scores = torch.tensor([90.0, 10.0, 0.0])
print("naive: ", softmax_naive(scores))
print("stable:", softmax_stable(scores))
# Out:
# naive:  tensor([nan, 0., 0.])
# stable: tensor([1.0000e+00, 1.8049e-35, 8.1940e-40])

# %% [markdown]
# **Fix:** use `torch.softmax`, which subtracts the maximum first.
#
# ## More tokens than context_length
#
# The mask is sized for `context_length` tokens. The book's class slices it with
# `[:num_tokens, :num_tokens]`; with a longer input the slice is too small, and the error
# comes from deep inside the masking step:


# %% tags=["raises-exception"] raises="RuntimeError: The size of tensor a (7) must match the size of tensor b (6)"
class BookCausalScores(nn.Module):
    def __init__(self, d_in, d_out, context_length):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        num_tokens = x.shape[1]
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return scores


seven_tokens = torch.rand(1, 7, 3)
BookCausalScores(3, 2, context_length=6)(seven_tokens)

# %% [markdown]
# The package checks the input first and says what is wrong and what to do:

# %% tags=["raises-exception"] raises="ValueError: x has 7 tokens, more than context_length=6"
CausalAttention(3, 2, context_length=6, dropout=0.0)(seven_tokens)
