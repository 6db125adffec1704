# %% [markdown]
# # Pitfalls
#
# Mistakes that readers really make when they type in chapter 3 and the pages after it, each
# with the error it really produces (this page was executed when the site was built). Some
# do not raise at all and silently compute something else; those are the dangerous ones.

# %%
import torch
from torch import nn
from torch.nn.functional import scaled_dot_product_attention

from attention_mechanisms import (
    CausalAttention,
    GroupedQueryAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    apply_rope,
    compute_rope_params,
    position_hide_mask,
    softmax_stable,
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
# ## Splitting the heads without transpose
#
# Splitting the heads has a trap of its own. `.view(b, num_heads, num_tokens, head_dim)`
# runs and gives the shape that `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)`
# gives, but not the same numbers. Here one sequence has 3 tokens of 4 features, to be split
# into 2 heads of 2; `torch.arange` numbers the features so that token $t$ holds
# $4t, \dots, 4t + 3$:

# %%
b, num_tokens, num_heads, head_dim = 1, 3, 2, 2
queries = torch.arange(12).view(b, num_tokens, num_heads * head_dim)
split = queries.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)  # correct
mixed = queries.view(b, num_heads, num_tokens, head_dim)  # the bug
print("correct, head 0:\n", split[0, 0])
print("the bug, head 0:\n", mixed[0, 0])
print("same shape:", split.shape == mixed.shape, "- same values:", torch.equal(split, mixed))
# Out:
# correct, head 0:
#  tensor([[0, 1],
#         [4, 5],
#         [8, 9]])
# the bug, head 0:
#  tensor([[0, 1],
#         [2, 3],
#         [4, 5]])
# same shape: True - same values: False

# %% [markdown]
# `view` never moves a number; it reads the same memory with new sizes. The memory holds the
# features token by token: all of token 0, then all of token 1. Viewing it as
# `(b, num_tokens, num_heads, head_dim)` cuts each token's features into `num_heads` pieces,
# which is what splitting into heads means, and `transpose(1, 2)` then brings the head
# dimension forward, so that head 0 holds the first two features of every token. Viewing it as
# `(b, num_heads, num_tokens, head_dim)` cuts the memory into consecutive runs of
# `head_dim` numbers instead: the rows of the bug's "head 0" are both halves of token 0
# and the first half of token 1. Its rows are no longer tokens, so the attention scores
# compare pieces of different tokens, and the causal mask hides the wrong pieces.
#
# **Fix:** split the last dimension, then transpose:
# `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)`, as the book does.
#
# ## torch.cat without dim=-1
#
# `MultiHeadAttentionWrapper` joins its heads with `torch.cat(..., dim=-1)`. Without
# `dim=-1`, `torch.cat` joins along dimension 0, the batch. Each head returns
# `(b, num_tokens, d_out)` = `(2, 6, 2)`, so two heads become a batch of four sequences
# with two features each:

# %%
torch.manual_seed(123)
heads = [CausalAttention(3, 2, context_length=6, dropout=0.0) for _ in range(2)]
print(torch.cat([head(batch) for head in heads]).shape)  # the bug
# Out:
# torch.Size([4, 6, 2])

# %% [markdown]
# Nothing fails at this line; the first layer that expects `2 * d_out = 4` features fails
# later, far from the cause.
#
# **Fix:** `torch.cat([head(x) for head in self.heads], dim=-1)`, which puts the heads side
# by side along the features:

# %%
print(torch.cat([head(batch) for head in heads], dim=-1).shape)
# Out:
# torch.Size([2, 6, 4])

# %% [markdown]
# ## d_out: per head or for all heads
#
# The two multi-head classes read `d_out` differently. In `MultiHeadAttentionWrapper` it is
# the size of **each** head, and the heads are concatenated, so the output has
# `num_heads * d_out` features. In `MultiHeadAttention` it is the size of the **whole**
# output, split into heads of `head_dim = d_out // num_heads`. The same arguments therefore
# give different widths:

# %%
wrapper = MultiHeadAttentionWrapper(3, 2, context_length=6, dropout=0.0, num_heads=2)
mha = MultiHeadAttention(3, 2, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttentionWrapper:", wrapper(batch).shape)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttentionWrapper: torch.Size([2, 6, 4])
# MultiHeadAttention:        torch.Size([2, 6, 2]) head_dim: 1

# %% [markdown]
# **Fix:** to get `k` output features from `h` heads, pass `d_out = k / h` to
# `MultiHeadAttentionWrapper` and `d_out = k` to `MultiHeadAttention`. For the wrapper's
# width of 4 above, `MultiHeadAttention` needs `d_out=4`; then both have two heads of two
# features each. ([Exercise 3.2](exercises.py) goes the other way: `d_out=1` gives the
# wrapper a width of 2.)

# %%
mha = MultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttention:        torch.Size([2, 6, 4]) head_dim: 2

# %% [markdown]
# ## head_dim from d_in
#
# `MultiHeadAttention` splits the `d_out` columns of its queries, keys and values into
# heads, so each head has `d_out // num_heads` of them. Computing it from the input's size
# instead, `head_dim = d_in // num_heads`, goes unnoticed whenever `d_in == d_out`, as in
# GPT-2, where both are the embedding size. With the book's `d_in=3, d_out=2` it even gives
# the right 1 by chance (3 // 2 = 1). With `d_out=4` it no longer does:


# %% tags=["raises-exception"] raises="RuntimeError: shape '[2, 6, 2, 1]' is invalid for input of size 48"
class HeadsFromInput(nn.Module):
    def __init__(self, d_in, d_out, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_in // num_heads  # the bug: the heads split d_out
        self.W_query = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x)  # (b, num_tokens, d_out)
        return queries.view(b, num_tokens, self.num_heads, self.head_dim)


print(HeadsFromInput(3, 2, num_heads=2)(batch).shape)  # 3 // 2 == 2 // 2: no error
HeadsFromInput(3, 4, num_heads=2)(batch)
# Out:
# torch.Size([2, 6, 2, 1])

# %% [markdown]
# **Fix:** `self.head_dim = d_out // num_heads`, after checking that `num_heads` divides
# `d_out`, as the book's class does.

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
# outputs. (PyTorch's own `scaled_dot_product_attention` takes a boolean **keep** mask, so
# the same mix-up happens there the other way round, as the next entry shows, while
# `torch.nn.MultiheadAttention` takes a boolean **hide** mask; the package's functional form
# names its argument `hide_mask` so that it cannot be misread.)
#
# ## The book's mask in scaled_dot_product_attention
#
# `torch.nn.functional.scaled_dot_product_attention` reads a boolean `attn_mask` as
# "True = may attend". Pass it the book's hide mask and the result is the wrong weights of
# the previous entry. With the identity matrix as keys and values and `scale=1.0`, the
# function returns its attention weights themselves, so they can be compared with the
# previous entry's `right` and `wrong`:

# %%
eye = torch.eye(4)
weights = scaled_dot_product_attention(scores, eye, eye, attn_mask=hide, scale=1.0)  # the bug
print(weights)
print("first three rows equal `wrong`:", torch.allclose(weights[:3], wrong[:3]))
# Out:
# tensor([[0.0000, 0.1813, 0.4468, 0.3719],
#         [0.0000, 0.0000, 0.8581, 0.1419],
#         [0.0000, 0.0000, 0.0000, 1.0000],
#         [0.0000, 0.0000, 0.0000, 0.0000]])
# first three rows equal `wrong`: True

# %% [markdown]
# Every token attends only to the tokens after it, and the last token has no key left at
# all. Where the softmax of the previous entry gave that row NaN, this function returns a
# row of zeros, so the last token's output is a zero vector and nothing signals the mistake.
#
# **Fix:** invert the mask, `attn_mask=~hide`, or drop the mask and pass `is_causal=True`:

# %%
fixed_mask = scaled_dot_product_attention(scores, eye, eye, attn_mask=~hide, scale=1.0)
fixed_causal = scaled_dot_product_attention(scores, eye, eye, is_causal=True, scale=1.0)
print("attn_mask=~hide equals `right`:", torch.allclose(fixed_mask, right))
print("is_causal=True equals `right`: ", torch.allclose(fixed_causal, right))
# Out:
# attn_mask=~hide equals `right`: True
# is_causal=True equals `right`:  True

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
# ## A mask from the notebook instead of self.mask
#
# A notebook that worked through section 3.5 step by step still has its `mask` of 6 by 6 lying
# around. A class whose `forward` reads that name instead of `self.mask` passes every test
# with the book's six tokens, because the two masks are equal. With a longer context it
# fails, and the module's own buffer, built from `context_length`, is never used:

# %%
mask = torch.triu(torch.ones(6, 6), diagonal=1)  # left over from section 3.5


class GlobalMask(nn.Module):
    def __init__(self, d_in, d_out, context_length):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        ones = torch.ones(context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1))

    def forward(self, x):
        num_tokens = x.shape[1]
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        return scores.masked_fill(mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # bug


print(GlobalMask(3, 2, context_length=6)(batch).shape)
# Out:
# torch.Size([2, 6, 6])

# %% tags=["raises-exception"] raises="RuntimeError: The size of tensor a (6) must match the size of tensor b (10)"
GlobalMask(3, 2, context_length=10)(torch.rand(1, 10, 3))

# %% [markdown]
# **Fix:** read `self.mask` in `forward`. `attention-check` probes each class with ten tokens
# and `context_length=10`, and changes the registered buffer to see whether the output
# follows it ([Check your code](check-your-code.py)).

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
# ## Scaling after the softmax
#
# The scores are divided by $\sqrt{d_k}$ **before** the softmax. Dividing the weights after
# it, `torch.softmax(attn_scores, dim=-1) / d_k**0.5`, runs without complaint, but the rows
# no longer sum to 1. Here with the book's seeded weights from section 3.4:

# %%
torch.manual_seed(123)
W_query = torch.rand(3, 2)
W_key = torch.rand(3, 2)
keys = inputs @ W_key
attn_scores = (inputs @ W_query) @ keys.T
d_k = keys.shape[-1]
weights_right = torch.softmax(attn_scores / d_k**0.5, dim=-1)
weights_wrong = torch.softmax(attn_scores, dim=-1) / d_k**0.5  # the bug
print("right, 'journey':", weights_right[1])
print("wrong, 'journey':", weights_wrong[1])
print("wrong * sqrt(d_k):", weights_wrong[1] * d_k**0.5)
print("row sums, right:", weights_right.sum(dim=-1))
print("row sums, wrong:", weights_wrong.sum(dim=-1))
# Out:
# right, 'journey': tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])
# wrong, 'journey': tensor([0.0991, 0.1773, 0.1701, 0.0818, 0.0486, 0.1302])
# wrong * sqrt(d_k): tensor([0.1401, 0.2507, 0.2406, 0.1157, 0.0687, 0.1842])
# row sums, right: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])
# row sums, wrong: tensor([0.7071, 0.7071, 0.7071, 0.7071, 0.7071, 0.7071])

# %% [markdown]
# Every row sums to $1 / \sqrt{2} \approx 0.7071$, so each context vector is a shrunken
# weighted sum instead of a weighted average. And the scaling no longer does its job: it is
# there to keep the scores small before the softmax, because large scores push the softmax
# towards a single 1, where its gradients are tiny (see
# [section 3.4](03-trainable-self-attention.py)). Dividing afterwards cannot undo that:
# multiplied back by $\sqrt{2}$, the wrong row is the softmax of the unscaled scores, which
# is sharper than the right one: its largest weight is 0.2507 instead of 0.2264.
#
# **Fix:** `torch.softmax(attn_scores / d_k**0.5, dim=-1)`, as the book writes it.

# %% [markdown]
# ## A mask multiplied in after the softmax
#
# Another way to hide the future is to zero the weights of later tokens after the softmax,
# `attn_weights * keep`, with `keep` a lower-triangular matrix of ones. The hidden weights
# are 0 indeed, but the softmax has already shared 1 among all six tokens, so the visible
# weights of a row sum to less than 1, and the later tokens' scores still sit in each
# row's denominator:

# %%
torch.manual_seed(123)
W_query, W_key = torch.rand(3, 2), torch.rand(3, 2)
attn_scores = (inputs @ W_query) @ (inputs @ W_key).T
scaled = attn_scores / 2**0.5
keep = torch.tril(torch.ones(6, 6))
weights_wrong = torch.softmax(scaled, dim=-1) * keep  # the bug
weights_right = torch.softmax(scaled.masked_fill(keep == 0, -torch.inf), dim=-1)
print("row sums, wrong:", weights_wrong.sum(dim=-1))
print("row sums, right:", weights_right.sum(dim=-1))
# Out:
# row sums, wrong: tensor([0.1551, 0.3764, 0.5952, 0.7024, 0.8248, 1.0000])
# row sums, right: tensor([1., 1., 1., 1., 1., 1.])

# %% [markdown]
# The first token's context vector is then 0.1551 times its own value vector instead of
# all of it, and changing the last token changes the weights of every earlier one: the
# future is hidden from the sum, not from the normalisation. `attention-check` feeds a
# class six equal tokens: with weights that sum to 1, every token gets the same output.
#
# **Fix:** mask the scores with $-\infty$ **before** the softmax, as section 3.5.1 does in
# its second way. (Multiplying after the softmax and then dividing each row by its sum
# also gives the right weights: that is the first way of section 3.5.1.)
#
# ## Scaling by the number of tokens
#
# The divisor is $\sqrt{d_k}$, the size of the keys, not the number of tokens. Dividing by
# `num_tokens ** 0.5` runs and gives weights that sum to 1, but a token's weights then
# depend on how many tokens follow it, which a causal model must never see. Here the
# weights of "journey" over "Your" and itself, in a text of two tokens and of six:

# %%
queries, keys = inputs @ W_query, inputs @ W_key
for num_tokens in (2, 6):
    scores = queries[:num_tokens] @ keys[:num_tokens].T
    hidden = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(hidden, -torch.inf)
    by_tokens = torch.softmax(scores / num_tokens**0.5, dim=-1)  # the bug
    by_d_k = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
    print(
        f"{num_tokens} tokens: by sqrt(num_tokens) {by_tokens[1, :2]}, by sqrt(d_k) {by_d_k[1, :2]}"
    )
# Out:
# 2 tokens: by sqrt(num_tokens) tensor([0.3986, 0.6014]), by sqrt(d_k) tensor([0.3986, 0.6014])
# 6 tokens: by sqrt(num_tokens) tensor([0.4409, 0.5591]), by sqrt(d_k) tensor([0.3986, 0.6014])

# %% [markdown]
# Divided by $\sqrt{d_k}$, the weights of "journey" are the same however long the text is;
# divided by the square root of the number of tokens, they change when four more tokens
# arrive after it. (With two tokens the two divisors happen to be equal: $d_k = 2$ here.)
#
# **Fix:** `attn_scores / keys.shape[-1] ** 0.5`.
#
# ## Dropout before the softmax
#
# Dropout belongs on the attention **weights**, after the softmax. Applied to the scores
# before it, a dropped score becomes 0, and a score of 0 is not hidden: the softmax gives it
# the weight $e^0 / \sum_j e^{s_j}$, like any other score. Only $-\infty$ hides a position.
# Here the book's scores for "journey" meet a dropout pattern with $p = 0.5$, once before and
# once after the softmax. (`nn.Dropout` draws its own pattern; drawing it from a seeded
# generator keeps the numbers on this page the same on every platform.)

# %%
attn_scores_2 = inputs @ inputs[1]  # the book's scores for "journey"
p = 0.5
keep = torch.rand(6, generator=torch.Generator().manual_seed(123)) >= p
print("kept:             ", keep.int())
print("scores dropped:   ", attn_scores_2 * keep / (1 - p))
before = torch.softmax(attn_scores_2 * keep / (1 - p), dim=-1)  # the bug
after = torch.softmax(attn_scores_2, dim=-1) * keep / (1 - p)  # the book's order
print("dropout before:   ", before, f"sum: {before.sum():.4f}")
print("dropout after:    ", after, f"sum: {after.sum():.4f}")
# Out:
# kept:              tensor([0, 1, 0, 1, 0, 1], dtype=torch.int32)
# scores dropped:    tensor([0.0000, 2.9900, 0.0000, 1.6868, 0.0000, 2.1730])
# dropout before:    tensor([0.0270, 0.5364, 0.0270, 0.1457, 0.0270, 0.2370]) sum: 1.0000
# dropout after:     tensor([0.0000, 0.4758, 0.0000, 0.2480, 0.0000, 0.3162]) sum: 1.0400

# %% [markdown]
# Before the softmax, every dropped token still gets a weight, and the weights still sum to
# 1, so dropout no longer removes connections; it only shifts weight towards the doubled
# survivors. After the softmax, the dropped weights are exactly 0 and the survivors are
# doubled, so the sum is 1 only on average, as [section 3.5.2](04-causal-attention.py)
# explains.
#
# **Fix:** `attn_weights = self.dropout(torch.softmax(...))`, after the softmax.
#
# ## Dividing the dropout survivors by p
#
# Dropout multiplies the values that survive by $1 / (1 - p)$, so that on average every value
# keeps its size. A hand-written dropout that divides by $p$ instead looks right with the
# book's $p = 0.5$, where $1 / p$ and $1 / (1 - p)$ are both 2. With $p = 0.25$ it is not:
# each value survives with probability 0.75 and is then multiplied by 4, so on average it
# grows threefold. The mean of a million dropped copies of a row shows it:


# %%
def dropout_by_hand(x, p, generator):
    keep = torch.rand(x.shape, generator=generator) >= p
    return x * keep / p  # the bug: should be / (1 - p)


row = torch.tensor([0.2, 0.3, 0.5])
copies = row.expand(1_000_000, 3)
generator = torch.Generator().manual_seed(123)
print("divided by p:    ", dropout_by_hand(copies, 0.25, generator).mean(dim=0).round(decimals=2))
torch.manual_seed(123)
print("nn.Dropout(0.25):", nn.Dropout(0.25)(copies).mean(dim=0).round(decimals=2))
# Out:
# divided by p:     tensor([0.6000, 0.9000, 1.5000])
# nn.Dropout(0.25): tensor([0.2000, 0.3000, 0.5000])

# %% [markdown]
# `nn.Dropout` keeps the expectation: its mean is the row itself. (With a million copies, the
# random error of each mean is below a thousandth, far smaller than the two decimals
# printed.)
#
# **Fix:** `x * keep / (1 - p)`, or use `nn.Dropout(p)`. With the same pattern as above:

# %%
keep = torch.rand(copies.shape, generator=torch.Generator().manual_seed(123)) >= 0.25
print("divided by 1 - p:", (copies * keep / (1 - 0.25)).mean(dim=0).round(decimals=2))
# Out:
# divided by 1 - p: tensor([0.2000, 0.3000, 0.5000])

# %% [markdown]
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

# %% [markdown]
# ## Fewer tokens than context_length
#
# Fewer tokens are allowed, and the slice `[:num_tokens, :num_tokens]` is what makes them
# work. Leave it out and the whole `(context_length, context_length)` mask is applied to the
# scores. With exactly `context_length` tokens the sizes agree, so the class passes a test on
# the book's six tokens; any shorter input, such as a short prompt when a model generates
# text, fails. The message is the previous entry's with the sizes the other way round: there
# the input was too long for the mask, here the mask is too big for the input, and the
# scores (tensor a) are smaller than the mask (tensor b).


# %% tags=["raises-exception"] raises="RuntimeError: The size of tensor a (4) must match the size of tensor b (6)"
class UncutMask(BookCausalScores):
    def forward(self, x):
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        scores.masked_fill_(self.mask.bool(), -torch.inf)  # the bug: no [:num_tokens, :num_tokens]
        return scores


uncut = UncutMask(3, 2, context_length=6)
print("6 tokens:", uncut(batch).shape)
uncut(batch[:, :4])  # 4 tokens
# Out:
# 6 tokens: torch.Size([2, 6, 6])

# %% [markdown]
# **Fix:** cut the mask to the input, `self.mask.bool()[:num_tokens, :num_tokens]`, with
# `num_tokens = x.shape[1]`, as the book's class above does:

# %%
print("4 tokens:", BookCausalScores(3, 2, context_length=6)(batch[:, :4]).shape)
# Out:
# 4 tokens: torch.Size([2, 4, 4])

# %% [markdown]
# ## Grouped-query attention with repeat instead of repeat_interleave
#
# The entries from here on are about the attention of today's LLMs (the pages after
# chapter 3). In [grouped-query attention](../llms/grouped-query-attention.py) each key head
# serves a run of neighbouring query heads: `[K1, K2]` must become `[K1, K1, K2, K2]`,
# which is `repeat_interleave`. `repeat` gives `[K1, K2, K1, K2]`, pairs query heads with
# the wrong keys, and raises nothing:

# %%
torch.manual_seed(0)
gqa = GroupedQueryAttention(d_in=3, d_out=8, dropout=0.0, num_heads=4, num_kv_groups=2)
q = gqa.W_query(batch).view(2, 6, 4, 2).transpose(1, 2)  # (b, 4 query heads, 6, 2)
k = gqa.W_key(batch).view(2, 6, 2, 2).transpose(1, 2)  # (b, 2 key heads, 6, 2)
v = gqa.W_value(batch).view(2, 6, 2, 2).transpose(1, 2)
for name, spread in [
    ("repeat", lambda t: t.repeat(1, 2, 1, 1)),
    ("repeat_interleave", lambda t: t.repeat_interleave(2, dim=1)),
]:
    context = scaled_dot_product_attention(q, spread(k), spread(v), is_causal=True)
    out = gqa.out_proj(context.transpose(1, 2).reshape(2, 6, 8))
    print(f"{name:<18} equals the module: {torch.allclose(out, gqa(batch), atol=1e-6)}")
# Out:
# repeat             equals the module: False
# repeat_interleave  equals the module: True

# %% [markdown]
# **Fix:** `keys.repeat_interleave(group_size, dim=1)`, as the class does. With one group
# (multi-query attention) or as many groups as heads, both orders agree, so a test of those
# two cases alone does not catch it.
#
# ## A sliding window off by one
#
# A window of $w$ lets each query see itself and the $w - 1$ tokens before it, so a key is
# hidden when `distance >= window`. Writing `distance > window` lets every query that has
# enough tokens before it see one more than asked, and the outputs stay plausible:

# %%
q_positions = torch.arange(6).unsqueeze(-1)
k_positions = torch.arange(6).unsqueeze(0)
distance = q_positions - k_positions
off_by_one = (distance < 0) | (distance > 3)
print("keys seen per query, > 3: ", (~off_by_one).sum(dim=1).tolist())
print("keys seen per query, >= 3:", (~position_hide_mask(0, 6, 0, 6, window=3)).sum(dim=1).tolist())
# Out:
# keys seen per query, > 3:  [1, 2, 3, 4, 4, 4]
# keys seen per query, >= 3: [1, 2, 3, 3, 3, 3]

# %% [markdown]
# **Fix:** hide `distance >= window`; a test that counts the keys each query sees (at most
# `window`) catches it.
#
# ## RoPE applied to the values
#
# [Rotary position embeddings](../llms/rotary-position-embeddings.py) turn queries and keys
# so that scores depend on the distance between tokens only. Values are what the weights
# mix; turn them too, and the context vectors depend on where the text starts. Shifting a
# whole sequence by 100 positions then changes the output:

# %%
torch.manual_seed(1)
cos, sin = compute_rope_params(head_dim=8, context_length=128)
q, k, v = (torch.randn(1, 1, 5, 8) for _ in range(3))


def rope_attention(offset, rotate_values):
    rq, rk = apply_rope(q, cos, sin, offset), apply_rope(k, cos, sin, offset)
    rv = apply_rope(v, cos, sin, offset) if rotate_values else v
    return scaled_dot_product_attention(rq, rk, rv, is_causal=True)


for rotate_values in (True, False):
    same = torch.allclose(
        rope_attention(0, rotate_values), rope_attention(100, rotate_values), atol=1e-5
    )
    print(f"values rotated: {rotate_values!s:<5} same output 100 positions later: {same}")
# Out:
# values rotated: True  same output 100 positions later: False
# values rotated: False same output 100 positions later: True

# %% [markdown]
# **Fix:** `apply_rope` on queries and keys only, after the split into heads.
#
# ## The position offset forgotten with a cache
#
# In generation with a KV cache, the new token is not at position 0. `apply_rope(x, cos,
# sin)` without `offset` turns it as if it were the first token, and its scores against the
# cached keys come out wrong, with no error:

# %%
keys_cached = apply_rope(k, cos, sin)  # positions 0 to 4, turned once and cached
new_query = torch.randn(1, 1, 1, 8)  # the token at position 5
right = apply_rope(new_query, cos, sin, offset=5) @ keys_cached.transpose(2, 3)
wrong = apply_rope(new_query, cos, sin) @ keys_cached.transpose(2, 3)
whole = torch.cat([q, new_query], dim=2)  # the same six tokens in one pass
full = apply_rope(whole, cos, sin)[:, :, -1:] @ keys_cached.transpose(2, 3)
print("with offset=5 equals one pass:", torch.allclose(right, full))
print("without offset equals one pass:", torch.allclose(wrong, full))
# Out:
# with offset=5 equals one pass: True
# without offset equals one pass: False

# %% [markdown]
# **Fix:** pass the position of the first new token as `offset`: the `ptr_current_pos` that
# the classes of these pages keep, not the cache's length, which a sliding window keeps
# short.
