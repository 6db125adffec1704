# %% [markdown]
# # Gated attention and linear attention
#
# Beyond the book. Every attention on the previous pages keeps something for each token it
# has read: keys and values, fewer of them, a window of them or a latent. Qwen3-Next and
# Kimi Linear go further. Three layers out of four keep no per-token cache at all, only a
# memory of fixed size that each token updates: *linear attention*. In Qwen3-Next these
# layers are Gated DeltaNet (Yang, Kautz and Hatamizadeh, 2025); in Kimi Linear they are
# Kimi Delta Attention (KDA; Kimi Team, 2025), which refines Gated DeltaNet's decay: one
# per feature of the key (channel-wise) instead of one number per head. The fourth layer
# is full attention; in Qwen3-Next, attention with a gate on its output. This page builds
# Qwen3-Next's two layers from the book's bonus material, shows why the memory stays the
# same size, and measures it against the caches of the previous pages; the next page
# trains such a layer a chunk of tokens at a time.

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from attention_mechanisms import (
    GatedDeltaNet,
    GatedMultiHeadAttention,
    GroupedQueryAttention,
    MultiHeadAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadLatentAttention,
)
from attention_mechanisms.checks import (
    check_dropout,
    check_flag,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)
from attention_mechanisms.chunkwise import chunkwise_delta_rule
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
batch = torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)

# %% [markdown]
# ## Gated attention
#
# Qwen3-Next's full-attention layer is chapter 3's multi-head attention with one change:
# a second projection of the input, passed through a sigmoid, scales every feature of the
# heads' output before `out_proj` mixes them (Qiu et al., 2025):
#
# $$
# \operatorname{out} = \big([\operatorname{head}_1 \| \cdots \| \operatorname{head}_h]
#     \odot \sigma(X W_\text{gate})\big) W_o + b_o
# $$
#
# Each gate lies between 0 and 1 and depends on the token, so a head can close for a
# token where it has nothing useful to add, instead of putting its weight on some
# harmless token. Here are the lines of
# [`GatedMultiHeadAttention`][attention_mechanisms.gated.GatedMultiHeadAttention] that
# differ from `MultiHeadAttention` (the whole class is folded under the changes):

# %% include="attention_mechanisms.gated.GatedMultiHeadAttention" diff_from="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# What changed:
#
# - `W_gate` is created right after `W_query`, as in the book's bonus code, so the same seed
#   gives the same parameters; the mask is not saved with the weights
#   (`persistent=False`).
# - Hidden scores are filled with the lowest number of the dtype instead of `-inf`, as the
#   bonus code does; after the softmax both give weights of exactly zero.
# - `context * torch.sigmoid(gate)` is the gate, between the heads and `out_proj`.
#
# On the book's six tokens, with two heads of two features:

# %%
torch.manual_seed(123)
gated = GatedMultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)
print("gates of the first token:", torch.sigmoid(gated.W_gate(inputs[0])))
print(gated(batch)[0])
# Out:
# gates of the first token: tensor([0.3889, 0.5552, 0.5824, 0.6378], grad_fn=<SigmoidBackward0>)
# tensor([[-0.3421, -0.0598, -0.1292, -0.1578],
#         [-0.3064, -0.0471, -0.1104, -0.1885],
#         [-0.3026, -0.0456, -0.1037, -0.2026],
#         [-0.3095, -0.0420, -0.0905, -0.1949],
#         [-0.2990, -0.0323, -0.0893, -0.1681],
#         [-0.2929, -0.0345, -0.0903, -0.1874]], grad_fn=<SelectBackward0>)

# %% [markdown]
# The gate adds $d_\text{in} \times d_\text{out}$ weights and changes nothing about the
# cache: the layer still keeps the keys and values of every token.
#
# ## From attention to a memory of fixed size
#
# Without the softmax, attention is a product that can be regrouped. Query $t$'s output is
# $\sum_{s \le t} (q_t^\top k_s)\, v_s = \big(\sum_{s \le t} k_s v_s^\top\big)^\top q_t$:
# the sum in the middle is a $d \times d$ matrix $S_t$ that each token updates by adding
# $k_t v_t^\top$. Reading it costs the same at token 10 as at the millionth, so the work
# grows linearly with the length of the text, and $S_t$ is all there is to keep: attention
# becomes a recurrent network with a state of fixed size (Katharopoulos, Vyas, Pappas and
# Fleuret, 2020, "Transformers are RNNs"). Computed both ways:

# %%
torch.manual_seed(0)
q, k, v = (torch.randn(6, 4, dtype=torch.float64) for _ in range(3))  # 6 tokens, d = 4
causal = torch.tril(torch.ones(6, 6, dtype=torch.float64))
all_pairs = ((q @ k.T) * causal) @ v  # (T, T) scores, no softmax: quadratic in T
S = torch.zeros(4, 4, dtype=torch.float64)  # (d, d): the memory
rows = []
for t in range(6):
    S = S + torch.outer(k[t], v[t])  # write token t
    rows.append(S.T @ q[t])  # read with its query
print("same outputs:", torch.allclose(torch.stack(rows), all_pairs))
# Out:
# same outputs: True

# %% [markdown]
# A memory that only adds fills up: after many tokens, every key recalls a blur of every
# value. Gated DeltaNet changes the update in two ways.
#
# - **The delta rule** of DeltaNet (Schlag, Irie and Schmidhuber, 2021, "Linear
#   Transformers Are Secretly Fast Weight Programmers"; made fast to train by Yang, Wang,
#   Zhang, Shen and Kim, 2024, "Parallelizing Linear Transformers with the Delta Rule over
#   Sequence Length"). Before writing, the memory recalls what it holds for the key,
#   $\tilde S^\top k_t$, and writes only a share $\beta_t$ of the difference from the new
#   value: $S_t = \tilde S + k_t \big(\beta_t \odot (v_t - \tilde S^\top k_t)\big)^\top$.
#   With $\beta_t = 1$ and a key of length 1, the new value replaces the old one.
# - **The decay.** $\tilde S = \alpha_t S_{t-1}$ with $\alpha_t$ between 0 and 1, one per
#   head and token, so that old memories fade when the input says so.
#
# The output is then read as before, $y_t = S_t^\top q_t$, and as in gated attention it is
# gated, here with a SiLU, before the heads are mixed.
#
# ## The class
#
# [`GatedDeltaNet`][attention_mechanisms.gated.GatedDeltaNet] has the names, the signature
# and the parameter order of the book's bonus code, without the short convolution that
# Qwen3-Next adds before the queries, keys and values. Keys and queries are scaled to
# length 1 first, by this function:

# %% include="attention_mechanisms.gated.l2norm"

# %% include="attention_mechanisms.gated.GatedDeltaNet"

# %% [markdown]
# From the top:
#
# - `W_gate` (the output gate), `W_beta` (how much to write, one value per feature, as in
#   the bonus code; with `beta_per_head=True` one per head, as in the paper and Qwen3-Next)
#   and `W_alpha` (the decay, one per head) are new projections. The decay is
#   $\alpha_t = \exp(-e^{A} \operatorname{softplus}(W_\alpha x_t + b_{dt}))$, with `A_log`
#   drawn as the log of a number between 0 and 16 and `dt_bias` starting at 1: the
#   parametrization of Mamba 2, which Gated DeltaNet keeps.
# - The queries are divided by $\sqrt{d_\text{head}}$ after `l2norm`, as the scores of
#   chapter 3 are.
# - The loop runs over the tokens: forget (`S * a_t`), recall (`kv_mem`), write the share
#   `delta` of the error, read (`y_t`). Every step is the same work, whatever `t` is. With
#   `chunk_size`, `chunkwise_delta_rule` computes the same a chunk of tokens at a time
#   ([Linear attention in chunks](linear-attention-in-chunks.py)).
# - `norm` is an RMSNorm of each head's output; `F.silu(gate)` gates it; `dropout` and
#   `out_proj` are chapter 3's.
# - With `use_cache=True`, the last state is kept in `cache_state` and the next call
#   starts from it: the whole cache of this layer.
#
# The loop is written for reading. When generating, it runs once per new token anyway. In
# training, over whole texts, it is slow and keeps a great deal for the backward pass; real
# implementations compute chunks of tokens with matrix products instead, with the same
# result (the next page).
#
# ## One token at a time
#
# Generating with the cache gives what one pass over the whole sequence gives, and the
# state has the same shape after 6 tokens as after 600:

# %%
torch.manual_seed(1)
deltanet = GatedDeltaNet(d_in=16, d_out=32, dropout=0.0, num_heads=4)
x = torch.randn(1, 12, 16)
with torch.no_grad():
    full = deltanet(x)
    steps = [deltanet(x[:, i : i + 1], use_cache=True) for i in range(12)]
    print("same as one pass:", torch.allclose(torch.cat(steps, dim=1), full, atol=1e-6))
    for length in (6, 60, 600):
        deltanet(torch.randn(1, length, 16))  # a new sequence: the cache is emptied
        deltanet(torch.randn(1, length, 16), use_cache=True)
        print(f"after {length:>3} tokens:", tuple(deltanet.cache_state.shape))
# Out:
# same as one pass: True
# after   6 tokens: (1, 4, 8, 8)
# after  60 tokens: (1, 4, 8, 8)
# after 600 tokens: (1, 4, 8, 8)

# %% [markdown]
# ## The memory against the caches
#
# To compare the layers of all these pages, take the shape that the book's bonus code
# uses for its memory plot: 48 layers, an embedding of 2,048 numbers, 16 heads of 128
# features. Each attention variant keeps its usual setting: grouped-query attention with 4
# key-value heads, a window of 4,096 tokens, a latent of 512. Every size is that of the
# tensors the class keeps, built on the `meta` device (shapes and dtypes, no data); Gated
# DeltaNet's is measured after 256 tokens, since it does not change.
#
# The caches are bfloat16. The recurrent state is float32, as real implementations keep
# it: FLA's (flash-linear-attention) kernels return the final state in float32, and
# Hugging Face's Qwen3-Next code computes the recurrence, and the state it returns, in
# float32. The package's class keeps its state in the dtype of its input, so here the
# Gated DeltaNet layer runs in float32; only the size of its state is used.


# %%
def cache_bytes(module, num_tokens, d_in=2048):
    """Bytes of the cache that module keeps after reading num_tokens tokens."""
    module.reset_cache()
    dtype = module.out_proj.weight.dtype  # the input in the module's dtype
    with torch.no_grad():
        x = torch.empty(1, num_tokens, d_in, device="meta", dtype=dtype)
        module(x, use_cache=True)
    return sum(buffer.nbytes for buffer in module.buffers())


with torch.device("meta"):
    layer_kinds = {
        "multi-head": GroupedQueryAttention(2048, 2048, 0.0, 16, num_kv_groups=16),
        "grouped-query, 4": GroupedQueryAttention(2048, 2048, 0.0, 16, num_kv_groups=4),
        "latent, 512": MultiHeadLatentAttention(2048, 2048, 0.0, 16, latent_dim=512),
        "sliding window, 4,096": MultiHeadAttentionWithSWA(2048, 2048, 0.0, 16, False, 4096),
        "Gated DeltaNet": GatedDeltaNet(2048, 2048, 0.0, 16),
    }
for kind, layer in layer_kinds.items():
    if kind != "Gated DeltaNet":  # its state stays float32
        layer.to(torch.bfloat16)
deltanet_state = cache_bytes(layer_kinds["Gated DeltaNet"], 256)


def model_cache_gib(kind, num_tokens, layers=48):
    if kind == "Gated DeltaNet":
        per_layer = deltanet_state  # the same after any number of tokens
    else:
        per_layer = cache_bytes(layer_kinds[kind], num_tokens)
    return layers * per_layer / 2**30


print(f"{'48 layers of':<24}{'4,096 tokens':>14}{'32,768':>10}{'131,072':>10}")
for kind in layer_kinds:
    sizes = "".join(f"{model_cache_gib(kind, t):>10.3f}" for t in (32768, 131072))
    print(f"{kind:<24}{model_cache_gib(kind, 4096):>10.3f} GiB{sizes}")
# Out:
# 48 layers of              4,096 tokens    32,768   131,072
# multi-head                   1.500 GiB    12.000    48.000
# grouped-query, 4             0.375 GiB     3.000    12.000
# latent, 512                  0.188 GiB     1.500     6.000
# sliding window, 4,096        1.500 GiB     1.500     1.500
# Gated DeltaNet               0.047 GiB     0.047     0.047

# %%
lengths = [1024, 4096, 16384, 65536, 131072]
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
for kind in layer_kinds:
    style = "--" if kind.startswith("sliding") else "-"  # it covers multi-head up to 4,096
    sizes = [model_cache_gib(kind, t) for t in lengths]
    ax.plot(lengths, sizes, style, marker="o", label=kind)
ax.set(xscale="log", yscale="log", xlabel="tokens in the context", ylabel="GiB, 48 layers")
ax.set_xticks(lengths, [f"{t:,}" for t in lengths])
ax.minorticks_off()
ax.legend(fontsize="small")
show_figure(
    fig,
    caption=(
        "Figure 1. What each kind of layer keeps for one sequence, 48 layers, from the "
        "tensors of the package's classes: caches in bfloat16, Gated DeltaNet's state in "
        "float32."
    ),
    alt=(
        "A log-log chart of memory in GiB against tokens in the context, from 1,024 to "
        "131,072. Multi-head, grouped-query and latent attention are parallel rising lines, "
        "in that order from the top. The sliding window rises with multi-head attention up "
        "to 4,096 tokens and then stays flat. Gated DeltaNet is a flat line from the start."
    ),
)
# Out:
# AttentionFigure("Figure 1. What each kind of layer keeps for one sequence, 48 layers, from the tensors of the package's classes: caches in bfloat16, Gated DeltaNet's state in float32.")

# %% [markdown]
# Every line that rises does so in proportion to the context; sharing, compressing and
# windowing move it down or stop it. Gated DeltaNet's memory is
# $h \times d_\text{head} \times d_\text{head}$ numbers per layer from the first token
# on. Which is smaller depends on the length: for its first 127 tokens its float32 state
# is larger than a multi-head layer's cache, and at 128 the two are equal (exercise 2).
#
# ## A 3:1 hybrid
#
# Qwen3-Next stacks 48 layers as 12 times (3 Gated DeltaNet layers, then 1 gated attention
# layer), as its model card states; Kimi Linear also keeps one full-attention layer in
# four, with latent attention, and its other three are KDA layers. The real layers have
# their own head counts (Qwen3-Next's gated attention has 16 query heads and 2 key-value
# heads of 256 features); with the shape above and multi-head attention in the full
# layers, as in the bonus code's plot:

# %%
print(f"{'context':>9}{'48 attention':>16}{'36 DeltaNet + 12 attention':>30}{'share':>8}")
for t in (4096, 32768, 131072, 1048576):
    attention_only = model_cache_gib("multi-head", t)
    hybrid = model_cache_gib("multi-head", t, layers=12) + model_cache_gib(
        "Gated DeltaNet", t, layers=36
    )
    print(f"{t:>9,}{attention_only:>12.2f} GiB{hybrid:>26.2f} GiB{hybrid / attention_only:>8.2f}")
# Out:
#   context    48 attention    36 DeltaNet + 12 attention   share
#     4,096        1.50 GiB                      0.41 GiB    0.27
#    32,768       12.00 GiB                      3.04 GiB    0.25
#   131,072       48.00 GiB                     12.04 GiB    0.25
# 1,048,576      384.00 GiB                     96.04 GiB    0.25

# %% [markdown]
# The hybrid's memory still grows with the context, through its full-attention layers, but
# at a quarter of the rate, and at long contexts it approaches a quarter of the full
# model's. That matches the saving the Kimi Linear report gives for its own 3:1 model,
# "up to 75%" of the KV cache (Kimi Team, 2025).
#
# ## Training
#
# Generating calls the layer once per new token, and the loop does no more work than that.
# Training runs it over whole texts, and there the loop is slow and keeps a great deal for
# the backward pass. [Linear attention in chunks](linear-attention-in-chunks.py) measures
# what it costs and derives the chunkwise form that real implementations train with.
#
# ## What it costs in quality
#
# A state of fixed size cannot hold every detail of a long text, and a simple bound says
# how much it can hold exactly. A head's state is a $d_k \times d_v$ matrix, and what it
# recalls, $S^\top k$, is linear in the key. Among $d_k + 1$ keys, one is a combination of
# the others, $k = \sum_i c_i k_i$, and it recalls $\sum_i c_i S^\top k_i$, the same
# combination of what they recall, whatever value was written under it. So a state holds
# at most $d_k$ key-value pairs exactly. And a write leaves the other keys alone only if
# they are orthogonal to its key: writing $u_j$ under $k_j$ changes what $k_i$ recalls by
# $(k_i^\top k_j)\, u_j$. Schlag, Irie and Schmidhuber (2021) infer this limit of linear
# attention's memory. With the delta rule, $\beta = 1$ and $\alpha = 1$, for $d = 8$:


# %%
def write_and_recall(keys, values):
    """Write each pair with the delta rule (beta = alpha = 1), then recall every key."""
    S = torch.zeros(keys.shape[1], values.shape[1], dtype=torch.float64)  # (d_k, d_v)
    for k_t, v_t in zip(keys, values, strict=True):
        S = S + torch.outer(k_t, v_t - S.T @ k_t)
    return keys @ S  # row i: S^T k_i


torch.manual_seed(2)
d = 8
orthonormal = torch.linalg.qr(torch.randn(d, d, dtype=torch.float64)).Q.T  # (d, d): rows
unit = F.normalize(torch.randn(d + 1, d, dtype=torch.float64), dim=-1)  # (d + 1, d)
values = torch.randn(d + 1, d, dtype=torch.float64)
recalled = write_and_recall(orthonormal, values[:d])
print(f"{d} orthonormal keys, all recalled exactly:", torch.allclose(recalled, values[:d]))
errors = (write_and_recall(unit, values) - values).norm(dim=-1)  # (d + 1,): one per key
print(f"{d + 1} keys of length 1, error of each recall:", [round(e, 2) for e in errors.tolist()])
# Out:
# 8 orthonormal keys, all recalled exactly: True
# 9 keys of length 1, error of each recall: [2.17, 1.54, 2.25, 3.0, 1.05, 2.53, 0.43, 1.67, 0.0]

# %% [markdown]
# With $d + 1$ keys, only the last one written is recalled exactly: each write disturbed
# the keys before it. A head of 128 features, as in the shape above, holds at most 128
# pairs exactly, whatever the length of the text; the decay and the delta rule choose what
# to keep, not how much. The measurements show where that hurts:
#
# - **Recall** (Gated DeltaNet paper, Table 4): models of 1.3B parameters trained on 100B
#   tokens, on tasks that need an exact piece of the input (SWDE, SQuAD, FDA, TriviaQA,
#   NQ, DROP), with the input truncated to 2K tokens (the table's caption). Averaged, a
#   Transformer scored 37.0, Gated DeltaNet 30.6, Mamba 2 29.8 and DeltaNet 26.2: the
#   linear models trail attention. Hybrids that add sliding-window attention layers to
#   Gated DeltaNet (one of them Mamba 2 layers too) scored 39.0 and 40.1, above the
#   Transformer. These are texts of at most 2K tokens; the table says nothing of the
#   lengths where the states and caches above differ most.
# - **Hybrid at scale** (Kimi Linear report, abstract): a 48B model (3B active) with three
#   KDA layers per latent-attention layer outperformed full latent attention on the tasks
#   evaluated, with up to 75% less KV cache and up to 6 times the decoding throughput at a
#   context of 1M tokens.
# - **The gate** (Qiu et al., 2025, abstract): over 30 variants of 15B mixture-of-experts
#   and 1.7B dense models trained on 3.5T tokens, a head-specific sigmoid gate after the
#   attention consistently improved quality, and it mitigated the "attention sink" that
#   makes heads put their weight on the first token.
#
# This is why both models keep full attention in a quarter of their layers: the linear
# layers carry most of the text at a fixed cost, and the attention layers can still look
# up an exact token anywhere in it.
#
# ## Exercises
#
# Written your own `GatedDeltaNet`? `attention-check` compares it with this page's class
# holding your weights, and checks that it is causal
# ([Check your code](../chapter-3/check-your-code.py)).
#
# ### Exercise 1: Replace, do not add
#
# Write the value $v_1$ under a key $k$ of length 1 into an empty memory, then the value
# $v_2$ under the same key, once by plain addition ($S \mathrel{+}= k v^\top$) and once with
# the delta rule and $\beta = 1$. What does each memory recall for $k$?

# %% tags=["solution"]
k = torch.tensor([0.6, 0.8, 0.0])  # length 1
v1, v2 = torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 2.0, 0.0])
plain, delta_rule = torch.zeros(3, 3), torch.zeros(3, 3)
for v in (v1, v2):
    plain = plain + torch.outer(k, v)
    delta_rule = delta_rule + torch.outer(k, v - delta_rule.T @ k)
print("plain addition recalls:", plain.T @ k)
print("delta rule recalls:", delta_rule.T @ k)
# Out:
# plain addition recalls: tensor([1., 2., 0.])
# delta rule recalls: tensor([0., 2., 0.])

# %% [markdown] tags=["solution"]
# Addition recalls the sum of both values; the delta rule recalls only the last one,
# because it first subtracts what the memory already returned for the key.

# %% [markdown]
# ### Exercise 2: When is the state the smaller one?
#
# For one layer of the shape above, after how many tokens does a multi-head cache become
# larger than Gated DeltaNet's state? Use `cache_bytes`.

# %% tags=["solution"]
one_token = cache_bytes(layer_kinds["multi-head"], 1)
print("multi-head, per token:", one_token, "bytes; DeltaNet state:", deltanet_state, "bytes")
print("the cache is larger from token", deltanet_state // one_token + 1)
# Out:
# multi-head, per token: 8192 bytes; DeltaNet state: 1048576 bytes
# the cache is larger from token 129

# %% [markdown] tags=["solution"]
# A multi-head layer caches $2 h\, d_\text{head}$ bfloat16 numbers per token, 2 bytes each,
# and Gated DeltaNet keeps $h\, d_\text{head}^2$ float32 numbers, 4 bytes each, so the two
# are equal after $d_\text{head} = 128$ tokens.
