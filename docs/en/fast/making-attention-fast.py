# %% [markdown]
# # Making attention fast
#
# Beyond the book. The `MultiHeadAttention` of chapter 3 is written to be understood: three
# projections, an explicit score matrix, a mask, a softmax, a second product. Production
# models compute the same function, but their code looks different. This page shows what
# each change buys, **measured when this page was built** on the machine that built it, so
# the timings below are that machine's and change from build to build. For the full
# benchmark at GPT-2's size, run `nox -s bench`.

# %%
import math
import platform

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.utils import benchmark

from attention_mechanisms import (
    FusedMultiHeadAttention,
    KVCache,
    MultiHeadAttention,
    scaled_dot_product_attention,
    tiled_attention,
)
from attention_mechanisms.plotting import show_figure


def milliseconds(fn, min_run_time=0.3):
    """Median time of fn() in milliseconds, measured with torch.utils.benchmark."""
    fn()  # warm up
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn})
    return timer.blocked_autorange(min_run_time=min_run_time).median * 1e3


# %% nondeterministic="describes the machine that built the site"
print(f"{platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}")

# %% [markdown]
# ## How much work attention is
#
# For a batch of $b$ sequences of $T$ tokens, $h$ heads of size $d$, attention does two
# matrix products per head: $Q K^\top$ ($T \times d$ times $d \times T$) and $P V$
# ($T \times T$ times $T \times d$). Each has $T^2 d$ multiply-adds, that is $2 T^2 d$
# floating-point operations, so attention costs
#
# $$
# \text{FLOPs}_\text{attention} = 4 \, b \, h \, T^2 d ,
# $$
#
# and half of that under a causal mask, if the implementation skips the hidden half. The
# four projections ($W_q$, $W_k$, $W_v$, $W_o$, each $d_\text{model} \times d_\text{model}$)
# add $8 \, b \, T \, d_\text{model}^2$. The projections grow linearly with $T$, attention
# quadratically:


# %%
def attention_flops(b, h, t, d, causal=False):
    flops = 4 * b * h * t * t * d
    return flops // 2 if causal else flops


def projection_flops(b, t, d_model):
    return 8 * b * t * d_model * d_model


for t in (256, 1024, 4096):
    attn = attention_flops(1, 12, t, 64) / 1e9
    proj = projection_flops(1, t, 768) / 1e9
    print(f"T={t:>5}: attention {attn:7.2f} GFLOP, projections {proj:6.2f} GFLOP")
# Out:
# T=  256: attention    0.20 GFLOP, projections   1.21 GFLOP
# T= 1024: attention    3.22 GFLOP, projections   4.83 GFLOP
# T= 4096: attention   51.54 GFLOP, projections  19.33 GFLOP

# %% [markdown]
# At GPT-2 small's context of 1,024 tokens the projections still cost more; at 4,096
# tokens attention costs more than twice as much as the projections. The score matrix
# itself also has to be stored: $b \cdot h \cdot T^2$ numbers, which at 4,096 tokens and 12
# heads is already 768 MiB in float32 for a single sequence:

# %%
for t in (256, 1024, 4096):
    print(f"T={t:>5}: one float32 score matrix for 12 heads = {12 * t * t * 4 / 2**20:8.1f} MiB")
# Out:
# T=  256: one float32 score matrix for 12 heads =      3.0 MiB
# T= 1024: one float32 score matrix for 12 heads =     48.0 MiB
# T= 4096: one float32 score matrix for 12 heads =    768.0 MiB

# %% [markdown]
# ## Three ways to compute the same thing
#
# 1. **The textbook class**, [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention]:
#    three `nn.Linear` projections, then scores, mask, softmax and the product with the values,
#    each step a separate tensor.
# 2. **One projection**: [`FusedMultiHeadAttention`][attention_mechanisms.fused.FusedMultiHeadAttention]
#    stacks $W_q$, $W_k$, $W_v$ into one `nn.Linear(d_in, 3 * d_out)`. One large matrix
#    product keeps the hardware busier than three small ones.
# 3. **One attention kernel**: the same class calls
#    `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`. PyTorch
#    picks a fused implementation (FlashAttention on recent GPUs, and a FlashAttention-style
#    kernel on CPUs) that applies the mask, the softmax and both products block by block,
#    without ever storing the $T \times T$ matrix. With dropout in training, PyTorch falls
#    back on a CPU to its plain math path, which does store it.
#
# The classes compute the same function. `from_multihead_attention` copies the weights of a
# textbook module into a fused one, and PyTorch's own `torch.nn.MultiheadAttention` can hold
# them too: its `in_proj_weight` is the three projection matrices stacked, like the fused
# module's, and the textbook projections have no bias:

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
fused = FusedMultiHeadAttention.from_multihead_attention(mha)
x = torch.randn(2, 256, 768)
torch_mha = torch.nn.MultiheadAttention(768, 12, batch_first=True).eval()
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(fused.qkv.weight)
    torch_mha.in_proj_bias.zero_()
    torch_mha.out_proj.load_state_dict(mha.out_proj.state_dict())
    hide = mha.mask.bool()[:256, :256]  # like the book's mask, True marks a hidden position
    reference = mha(x)
    print("fused agrees to 1e-5:", (fused(x) - reference).abs().max().item() < 1e-5)
    torch_out, _ = torch_mha(x, x, x, attn_mask=hide, need_weights=False)
    print("torch.nn agrees to 1e-5:", (torch_out - reference).abs().max().item() < 1e-5)
print(
    "same parameter count:",
    sum(p.numel() for p in fused.parameters()) == sum(p.numel() for p in mha.parameters()),
)
# Out:
# fused agrees to 1e-5: True
# torch.nn agrees to 1e-5: True
# same parameter count: True

# %% [markdown]
# ### Measured
#
# A smaller shape than GPT-2's keeps this page's build short: 4 sequences of 512 tokens,
# 768 dimensions, 12 heads, float32, forward pass only, every module in evaluation mode
# (`torch.nn.MultiheadAttention` takes its inference fast path only there).

# %% nondeterministic="timings depend on the machine that builds the site"
b, t, d_model, heads = 4, 512, 768, 12
x = torch.randn(b, t, d_model)
hide = mha.mask.bool()[:t, :t]
for module in (mha, fused, torch_mha):
    module.eval()
candidates = {
    "MultiHeadAttention (textbook)": lambda: mha(x),
    "FusedMultiHeadAttention": lambda: fused(x),
    "torch.nn.MultiheadAttention": lambda: torch_mha(x, x, x, attn_mask=hide, need_weights=False),
}
flops = attention_flops(b, heads, t, d_model // heads) + projection_flops(b, t, d_model)
times = {}
with torch.no_grad():
    for name, fn in candidates.items():
        times[name] = milliseconds(fn)
        print(f"{name:<31} {times[name]:7.1f} ms  {flops / times[name] / 1e6:6.1f} GFLOP/s")
print(
    f"textbook / fused: {times['MultiHeadAttention (textbook)'] / times['FusedMultiHeadAttention']:.1f}x"
)
print("fastest:", min(times, key=times.get))

# %% [markdown]
# GFLOP/s here counts the full attention FLOPs, as if nothing were skipped. A causal kernel
# that skips the hidden half does less work than that count, so its figure overstates the
# rate at which it computes.
#
# ## Why the fused kernel needs less memory
#
# The attention step alone, without projections, as the sequence grows (one sequence, 12
# heads of 64): the textbook step stores the full score matrix, the fused and tiled steps
# do not, so only they could go on to long contexts without running out of memory. The
# last lines compare the tiled step with the textbook one and say which step was the
# fastest at each length, on the machine that built this page.


# %% nondeterministic="timings depend on the machine that builds the site"
def textbook_step(q, k, v):
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)).masked_fill(
        torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1), -torch.inf
    )
    return torch.softmax(scores / q.shape[-1] ** 0.5, dim=-1) @ v


steps = {
    "textbook": textbook_step,
    "fused (SDPA)": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "tiled (pure PyTorch)": lambda q, k, v: tiled_attention(q, k, v, causal=True, block_size=256),
}
lengths = [256, 512, 1024, 2048]
step_times = {name: [] for name in steps}
with torch.no_grad():
    for t in lengths:
        q, k, v = torch.randn(3, 1, 12, t, 64).unbind(0)
        for name, step in steps.items():
            step_times[name].append(
                milliseconds(lambda step=step, q=q, k=k, v=v: step(q, k, v), 0.2)
            )
        print(f"T={t:>5}: " + ", ".join(f"{n} {step_times[n][-1]:7.2f} ms" for n in steps))
tiled_times = step_times["tiled (pure PyTorch)"]
tiled_share = {t: tiled_times[i] / step_times["textbook"][i] for i, t in enumerate(lengths)}
print("tiled / textbook time:", ", ".join(f"{t}: {r:.2f}" for t, r in tiled_share.items()))
fastest = {t: min(steps, key=lambda n, i=i: step_times[n][i]) for i, t in enumerate(lengths)}
print("fastest at each length:", ", ".join(f"{t}: {n}" for t, n in fastest.items()))

# %% nondeterministic="a plot of the timings above"
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for name, values in step_times.items():
    left.plot(lengths, values, marker="o", label=name)
left.set(xscale="log", yscale="log", xlabel="tokens", ylabel="milliseconds", title="Time")
left.set_xticks(lengths, [str(t) for t in lengths])
left.minorticks_off()
left.legend()
right.plot(
    lengths, [12 * t * t * 4 / 2**20 for t in lengths], marker="o", label="textbook: T x T scores"
)
right.plot(
    lengths, [3 * 12 * t * 64 * 4 / 2**20 for t in lengths], marker="o", label="fused: q, k, v only"
)
right.set(
    xscale="log", yscale="log", xlabel="tokens", ylabel="MiB", title="Memory the step must hold"
)
right.set_xticks(lengths, [str(t) for t in lengths])
right.minorticks_off()
right.legend()
show_figure(
    fig,
    caption=(
        "Figure 7. The attention step alone as the sequence grows: time measured when this "
        "page was built (left), memory computed from the tensor shapes (right)."
    ),
    alt=(
        "Two log-log line charts. Left: time of the attention step for 256 to 2048 tokens "
        "for the textbook, fused and tiled implementations; all rise steeply with the "
        f"number of tokens; fastest at each length: {', '.join(fastest.values())}. "
        "Right: memory the step must hold, growing with the square of the tokens for the "
        "textbook step and linearly for the fused one."
    ),
)

# %% [markdown]
# ## The tiled algorithm, step by step
#
# How can the softmax be computed without all the scores of a row at once? The
# [`tiled_attention`][attention_mechanisms.tiled.tiled_attention] function follows
# FlashAttention: it walks over the keys one block at a time and keeps, for each query
# row, three running quantities: the largest score so far $m$, the sum
# $\ell = \sum_j e^{s_j - m}$, and the unnormalised output $o = \sum_j e^{s_j - m} v_j$.
# When a new block raises the maximum from $m$ to $m'$, everything accumulated so far is
# rescaled by $e^{m - m'}$.
#
# Here is one query row over eight keys, in two blocks of four. The largest score, 2.5, is
# in the second block, so that block raises the maximum and the first block's sums shrink:

# %%
scores = torch.tensor([0.5, 1.2, -0.3, 0.8, 2.5, -1.0, 0.1, 1.9])  # one query, 8 keys
torch.manual_seed(0)
values = torch.randn(8, 3)

m, ell, o = -math.inf, 0.0, torch.zeros(3)
for start in (0, 4):
    s, v = scores[start : start + 4], values[start : start + 4]
    m_new = max(m, s.max().item())
    rescale = math.exp(m - m_new)  # shrink what was summed under the old maximum
    p = torch.exp(s - m_new)
    ell = rescale * ell + p.sum().item()
    o = rescale * o + p @ v
    m = m_new
    print(f"keys {start}-{start + 3}: m = {m:.4f}, rescale = {rescale:.4f}, l = {ell:.4f}")

print("online:  ", o / ell)
print("one pass:", torch.softmax(scores, dim=0) @ values)
# Out:
# keys 0-3: m = 1.2000, rescale = 0.0000, l = 2.3900
# keys 4-7: m = 2.5000, rescale = 0.2725, l = 2.3211
# online:   tensor([-0.0863,  0.2827, -0.4691])
# one pass: tensor([-0.0863,  0.2827, -0.4691])

# %% [markdown]
# The first block starts from $m = -\infty$, so its rescale factor is $e^{-\infty} = 0$:
# there is nothing to shrink yet. The second block raises $m$ from 1.2 to 2.5, and the
# first block's $\ell$ and $o$ are multiplied by $e^{1.2 - 2.5} \approx 0.2725$ before the
# second block's terms are added. The online (block by block) and one-pass results agree to the printed
# digits. The same code with whole blocks of queries, and with keys that lie entirely in a
# query block's future skipped, is `tiled_attention`; it matches plain attention to
# 1e-12 in float64, causal or not:

# %%
q, k, v = torch.randn(3, 2, 12, 300, 64, dtype=torch.float64).unbind(0)
for causal in (False, True):
    reference, _ = scaled_dot_product_attention(q, k, v, causal=causal)
    tiled = tiled_attention(q, k, v, causal=causal, block_size=64)
    print(f"causal={causal}: equal to 1e-12:", torch.allclose(tiled, reference, rtol=0, atol=1e-12))
# Out:
# causal=False: equal to 1e-12: True
# causal=True: equal to 1e-12: True

# %% [markdown]
# Written in Python, the tiled form pays for its loops: every block is a separate small
# matrix product started from the interpreter. Fused kernels run the same algorithm inside
# one GPU or CPU kernel, where each block stays in fast on-chip memory: that is what makes
# FlashAttention fast. Yet even the Python version never writes the $T \times T$ matrix to
# memory, and that matters more as the sequence grows: the timings above show how the two
# costs balanced on the machine that built this page.
#
# ## The KV cache
#
# A language model generates one token at a time. Without a cache, step $t$ runs attention
# over all $t$ tokens again, although the keys and values of the first $t - 1$ tokens have
# not changed. A **KV cache** keeps them: each step projects only the new token and attends
# with one query against the cached keys. Because the new token is the *last* position, it
# may see every cached key.
#
# [`KVCache`][attention_mechanisms.fused.KVCache] does this for the fused module. Feeding
# tokens one at a time gives the same outputs as one full pass:

# %%
torch.manual_seed(1)
fused_small = FusedMultiHeadAttention(64, 64, context_length=128, dropout=0.0, num_heads=4)
sequence = torch.randn(1, 40, 64)
with torch.no_grad():
    full = fused_small(sequence)
    cache = KVCache()
    steps_out = [fused_small(sequence[:, i : i + 1], kv_cache=cache) for i in range(40)]
print("cached positions:", len(cache))
print("same outputs:", torch.allclose(torch.cat(steps_out, dim=1), full, atol=1e-6))
# Out:
# cached positions: 40
# same outputs: True

# %% [markdown]
# The saving: generating $n$ tokens without a cache reprocesses $1 + 2 + \dots + n$
# positions; with a cache, $n$.

# %% nondeterministic="timings depend on the machine that builds the site"
n = 256
tokens = torch.randn(1, n, 768)
with torch.no_grad():
    fused.eval()

    def without_cache():
        for i in range(1, n + 1):
            fused(tokens[:, :i])

    def with_cache():
        cache = KVCache()
        for i in range(n):
            fused(tokens[:, i : i + 1], kv_cache=cache)

    slow, quick = milliseconds(without_cache, 0.5), milliseconds(with_cache, 0.5)
print(
    f"{n} tokens one by one: {slow:.0f} ms without a cache, {quick:.0f} ms with one ({slow / quick:.1f}x)"
)

# %% [markdown]
# ## In short
#
# | change | what it saves |
# | --- | --- |
# | one QKV projection | three matrix products become one larger, better-used one |
# | fused attention kernel | no $T \times T$ matrix in memory; mask, softmax and products in one pass |
# | skipping the causal half | half the attention FLOPs |
# | KV cache | at generation time, work per new token proportional to the context, not its square |
#
# None of them changes the function: given the same weights, every module on this page gives
# the textbook module's outputs up to rounding (to 1e-5 above), and the package's tests
# check that they do.
