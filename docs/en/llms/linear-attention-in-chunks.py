# %% [markdown]
# # Linear attention in chunks
#
# Beyond the book. [Gated attention and linear attention](linear-attention.py) builds Gated
# DeltaNet as the book's bonus code does, with a loop that reads one token at a time. That
# is all that generating needs; training is another matter. This page measures what the loop
# costs in training, then derives the chunkwise form that real implementations train with
# (Yang, Wang, Zhang, Shen and Kim, 2024; with the decay, Yang, Kautz and Hatamizadeh,
# 2025), which the package computes with `GatedDeltaNet(..., chunk_size=...)`.

# %%
import statistics
import time

import torch
import torch.nn.functional as F

from attention_mechanisms import GatedDeltaNet, MultiHeadAttention

# %% [markdown]
# ## Training: the loop's cost
#
# Generating calls the layer once per new token, and the loop does no more work than that.
# Training runs it over whole texts, forward and then backward, and there the loop is
# costly twice over. Its steps run one after the other, each a handful of small
# operations, and the backward pass walks them back one by one. And autograd keeps, for
# the backward pass, what the products of every step need: among them the state as the
# step found it and the state after its decay, $h \times d_\text{head}^2$ numbers each, for
# every token.
#
# To see how much, `torch.autograd.graph.saved_tensors_hooks` calls a function with every
# tensor that autograd saves; the one below adds up the memory behind them, each block of
# memory (storage) once, since views share one. The layer has the shape of the smallest
# GPT-2 at the end of chapter 3 (768 features, 12 heads of 64) and reads one sequence of
# 1,024 tokens: with the loop, and a chunk of tokens at a time (`chunk_size`, next
# section). One seed gives every form the same parameters. `beta_per_head=True` changes
# the shape of `W_beta`, so those forms are a different layer, with the per-head gate of
# the paper. Multi-head attention of the same shape is there for reference.


# %%
def saved_mib(module, x):
    """MiB of the tensors that autograd keeps from module(x) for the backward pass."""
    storages = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage  # each storage once; held, so no address reuse
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        module(x)
    return sum(storage.nbytes() for storage in storages.values()) / 2**20


def training_layer(chunk_size=None, beta_per_head=False):
    torch.manual_seed(123)
    return GatedDeltaNet(768, 768, 0.0, 12, chunk_size=chunk_size, beta_per_head=beta_per_head)


forms = {
    "loop": training_layer(),
    "chunks of 16": training_layer(16),
    "chunks of 64": training_layer(64),
    "loop, beta per head": training_layer(beta_per_head=True),
    "chunks of 64, beta per head": training_layer(64, beta_per_head=True),
}
torch.manual_seed(0)
x_train = torch.randn(1, 1024, 768)  # (b, T, d_in): one sequence of 1,024 tokens
saved = {name: saved_mib(layer, x_train) for name, layer in forms.items()}
torch.manual_seed(123)
saved["multi-head attention"] = saved_mib(MultiHeadAttention(768, 768, 1024, 0.0, 12), x_train)
print("kept for the backward pass:")
for name, mib in saved.items():
    print(f"  {name:<29}{mib:>7.1f} MiB")
print(f"two float32 states per token: {2 * 1024 * 12 * 64 * 64 * 4 / 2**20:.1f} MiB")
# Out:
# kept for the backward pass:
#   loop                           428.7 MiB
#   chunks of 16                   132.4 MiB
#   chunks of 64                   278.6 MiB
#   loop, beta per head            425.8 MiB
#   chunks of 64, beta per head     83.7 MiB
#   multi-head attention            66.2 MiB
# two float32 states per token: 384.0 MiB

# %% [markdown]
# The two states per token make up most of what the loop keeps; the rest is the input and
# the projections, which the chunked forms keep as well. The chunked forms keep a state
# only at the start of each chunk, and some matrices of a chunk's size (next section).
# These numbers depend only on the shapes, not on the machine. The time does; each form's
# forward and backward pass, the median of three:


# %% nondeterministic="timings depend on the machine that builds the site"
def train_seconds(layer, repeats=3):
    """Median seconds of one forward and backward pass over x_train."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        layer(x_train).square().mean().backward()
        times.append(time.perf_counter() - start)
        layer.zero_grad(set_to_none=True)
    return statistics.median(times)


timed = ["loop", "chunks of 16", "chunks of 64, beta per head"]
seconds = {name: train_seconds(forms[name]) for name in timed}
print(f"{'loop':<29}{seconds['loop']:>6.2f} s")
for name in timed[1:]:
    print(f"{name:<29}{seconds[name]:>6.2f} s, {seconds['loop'] / seconds[name]:.1f} times as fast")
print(f"on {torch.get_num_threads()} thread(s)")

# %% [markdown]
# What holds on any machine: the loop keeps more than three times what chunks of 16 keep
# and more than four times what per-head chunks of 64 keep, and the chunked forms are
# faster by a wide margin. The per-head layer's own loop keeps nearly as much as the
# per-feature one.

# %%
for name in ("chunks of 16", "chunks of 64, beta per head"):
    print(f"loop keeps / {name} keep: {saved['loop'] / saved[name]:.1f}")
print("per-head loop keeps nearly as much:", saved["loop, beta per head"] / saved["loop"] > 0.95)
faster = min(seconds["loop"] / seconds[name] for name in timed[1:])
print("both chunked forms at least twice as fast:", faster >= 2)
# Out:
# loop keeps / chunks of 16 keep: 3.2
# loop keeps / chunks of 64, beta per head keep: 5.1
# per-head loop keeps nearly as much: True
# both chunked forms at least twice as fast: True

# %% [markdown]
# ## Chunk by chunk
#
# The chunkwise form computes the same recurrence with matrix products, a chunk of $C$
# tokens at a time (for DeltaNet, Yang, Wang, Zhang, Shen and Kim, 2024; with the decay,
# Gated DeltaNet paper, section 3.3). Take one chunk, its tokens numbered $1$ to $C$, and
# $S_0$ the state before it. Write $u_t = \beta_t \odot (v_t - \alpha_t S_{t-1}^\top k_t)$
# for what token $t$ writes (the loop's `delta`), so that
# $S_t = \alpha_t S_{t-1} + k_t u_t^\top$, and $g_t = \sum_{i \le t} \ln \alpha_i$, so that
# the decay from token $i$ to token $t$ is $e^{g_t - g_i}$ and from the chunk's start
# $\gamma_t = e^{g_t}$. Unrolled from $S_0$, the recurrence reads
#
# $$
# S_t = \gamma_t S_0 + \sum_{i \le t} e^{g_t - g_i}\, k_i u_i^\top
# $$
#
# and the whole chunk follows from it.
#
# **What each token writes.** $u_t$ needs the state before it,
# $\alpha_t S_{t-1} = \gamma_t S_0 + \sum_{i<t} e^{g_t - g_i} k_i u_i^\top$. Put into its
# definition, with $M_{ti} = e^{g_t - g_i}\, k_t^\top k_i$ for $i < t$:
#
# $$
# u_t + \beta_t \odot \sum_{i<t} M_{ti}\, u_i = \beta_t \odot (v_t - \gamma_t S_0^\top k_t)
# $$
#
# Row $t$ uses only the rows before it. With the $C$ rows $u_t$ stacked into $U$, this is
# $(I + \operatorname{diag}(\beta) M)\, U = \dots$, a unit lower-triangular system, solved
# for all rows at once by substitution. Its inverse, times $\operatorname{diag}(\beta)$, is
# what the papers call the *UT transform*.
#
# **The outputs.** Every query reads the state at the chunk's start with one matrix
# product, and adds a causal, decayed product within the chunk, like attention without the
# softmax:
#
# $$
# y_t = S_t^\top q_t = \gamma_t S_0^\top q_t + \sum_{i \le t} e^{g_t - g_i} (q_t^\top k_i)\, u_i
# $$
#
# **The next chunk** starts from $S_C = \gamma_C S_0 + \sum_i e^{g_C - g_i}\, k_i u_i^\top$:
# one jump over $C$ tokens.
#
# Two details keep the decays exact. $g_t - g_i$ is the sum of $\ln \alpha_j$ for
# $i < j \le t$, and it is summed as such, term by term: as the difference of two running
# sums, each long and large, it would lose digits in float32. And $e^{g_t - g_i}$ is only
# wanted for $i \le t$; for $i > t$ the difference is positive and could overflow, so it
# is set to $-\infty$ before the exponential, which gives 0.
#
# With one $\beta$ per head, all value features share one system, and each is a column of
# its right-hand side. With one per value feature, as in the bonus code, the row of feature
# $j$ is scaled by its own $\beta$, so each of the $d$ value features has its own system:
# $d$ times the triangular work and memory. The package computes the systems with this
# function, then the chunks:

# %% include="attention_mechanisms.chunkwise.solve_unit_lower"

# %% include="attention_mechanisms.chunkwise.chunkwise_delta_rule"

# %% [markdown]
# From the top of `chunkwise_delta_rule`:
#
# - A text shorter than a chunk is one short chunk. Otherwise the last chunk is padded
#   with tokens that change nothing: zero keys, values and queries, $\beta = 0$ and
#   $\ln \alpha = 0$ (`F.pad` pads with zeros).
# - The tokens are viewed as `n` chunks of `chunk_size`. `segment` holds $g_t - g_i$, the
#   sums of `alpha_log` after $i$ up to $t$ within each chunk; `decay` is $e^{g_t - g_i}$,
#   masked before the exponential.
# - `earlier` is $M$ (`tril(-1)`: only $i < t$). `system` is $\operatorname{diag}(\beta) M$,
#   `m` of them: one per head, or one per value feature. `reads` holds the products
#   $e^{g_t - g_i}\, q_t^\top k_i$ for $i \le t$.
# - `gamma` is $\gamma_t$, the decay since the chunk's start, and `to_end` is
#   $e^{g_C - g_t}$, the decay to its end.
# - The loop runs over the chunks, not the tokens (`unbind` splits them without copies):
#   `recalled` is $S_0^\top k_t$ for every row at once, `solve_unit_lower` gives $U$, the
#   output adds the read of the start state to the products within the chunk, and the
#   state jumps to the chunk's end.
# - `solve_unit_lower` calls `torch.linalg.solve_triangular` with `unitriangular=True`: it
#   takes the diagonal as ones, so `system`, which is zero there, stands for
#   $I + \operatorname{diag}(\beta) M$. One system per head solves all $d$ value features
#   as columns; with one per feature, each feature's column is the right-hand side of its
#   own system.
#
# Both forms of the same layer, on the sequence above, with a loss that weighs every
# output differently. The gradients are compared with the largest of them, since each adds
# up the contributions of 1,024 tokens:


# %%
def outputs_and_gradients(layer, x, loss_weights):
    layer.zero_grad(set_to_none=True)
    y = layer(x)
    (y * loss_weights).sum().backward()
    return y.detach(), [p.grad for p in layer.parameters()]


torch.manual_seed(1)
loss_weights = torch.randn(1, 1024, 768)
y_loop, grads_loop = outputs_and_gradients(forms["loop"], x_train, loss_weights)
y_chunks, grads_chunks = outputs_and_gradients(forms["chunks of 64"], x_train, loss_weights)
largest = max(g.abs().max() for g in grads_loop)
gap = max((a - b).abs().max() for a, b in zip(grads_loop, grads_chunks, strict=True))
print("outputs within 1e-5:", (y_chunks - y_loop).abs().max().item() <= 1e-5)
print("gradients within 1e-5 of the largest:", (gap <= 1e-5 * largest).item())
# Out:
# outputs within 1e-5: True
# gradients within 1e-5 of the largest: True

# %% [markdown]
# The price of the per-feature gate is in the systems. They hold $C \times C$ numbers per
# chunk and per feature, so $T \times C \times d$ per head: they grow with the chunk, where
# one system per head stays small.

# %%
for chunk_size, systems in ((16, 64), (64, 64), (64, 1)):  # systems per head and chunk
    numbers = 1024 // chunk_size * systems * chunk_size**2 * 12  # (n, m, C, C) for 12 heads
    per = "feature" if systems == 64 else "head"
    print(f"chunks of {chunk_size}, beta per {per:<8}{numbers * 4 / 2**20:>6.1f} MiB of systems")
# Out:
# chunks of 16, beta per feature   48.0 MiB of systems
# chunks of 64, beta per feature  192.0 MiB of systems
# chunks of 64, beta per head       3.0 MiB of systems

# %% [markdown]
# That is why chunks of 16 serve the per-feature gate better than chunks of 64, which keep
# about twice as much for the backward pass (measured above); with one gate per head,
# chunks of 64 keep the least of all. `python benchmarks/chunkwise.py`, run by
# `nox -s bench`, times every form and measures its peak memory.
