# %% [markdown]
# # The variants side by side
#
# Beyond the book. The pages before this one each change one thing about chapter 3's
# multi-head attention: fewer key-value heads, a window, a latent, a state of fixed size.
# This page puts them side by side, each in the published model its own page uses: what
# the cache keeps, what a decoding step must read and compute, what a prompt costs, and
# what the papers measured of the quality. At the end, every variant generates tokens on
# the machine that built this page.

# %%
import time
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from torch.utils import benchmark

from attention_mechanisms import (
    GatedDeltaNet,
    GroupedQueryAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadLatentAttention,
)
from attention_mechanisms.plotting import show_figure

# %% [markdown]
# ## Three costs
#
# For a layer with $h$ query heads whose cache holds $g$ key-value heads of $d_k$ and
# $d_v$ numbers, after $T$ tokens:
#
# - **The cache** holds $T \, g \, (d_k + d_v)$ numbers, and a decoding step **reads all of
#   them** once: on today's hardware, reading them takes longer than the arithmetic, so
#   these bytes set the speed of long generations.
# - **The arithmetic of a decoding step** is $h \, T \, (d_k + d_v)$ multiply-adds: each
#   query head scores every cached key and sums every cached value. Sharing key-value heads
#   ($g < h$) shrinks what is read, not what is computed.
# - **A prompt of $T$ tokens** (prefill) costs $h \, (d_k + d_v)$ multiply-adds per score,
#   and causal attention has $T (T + 1) / 2$ scores. A window of $w$ leaves
#   $\sum_t \min(t + 1, w)$, if the kernel skips the rest
#   ([Sliding-window attention](sliding-window-attention.py)).
#
# Only attention's own work is counted: the projections and the feed-forward layers cost
# the same for every token whatever the context, and differ between models for other
# reasons. Caches are bfloat16 (2 bytes a number); Gated DeltaNet's state is float32
# (4 bytes), as FLA and Qwen3-Next keep it.

# %%
BF16, FP32 = 2, 4


def scores(num_tokens, window=None):
    """Scores in causal attention over num_tokens tokens, each seeing at most window keys."""
    w = num_tokens if window is None else min(window, num_tokens)
    return w * (w + 1) // 2 + (num_tokens - w) * w


@dataclass
class Layers:
    """count layers of one kind: cache bytes, decoding and prefill multiply-adds."""

    count: int
    cache: Callable[[int], int]  # tokens -> bytes kept by one layer
    decode: Callable[[int], int]  # tokens in the cache -> multiply-adds for one new token
    prefill: Callable[[int], int]  # tokens in the prompt -> multiply-adds


def attention(count, heads, kv_heads, d_k, d_v, window=None):
    """Multi-head, grouped-query or sliding-window attention."""
    seen = (lambda t: t) if window is None else (lambda t: min(t, window))
    return Layers(
        count,
        cache=lambda t: seen(t) * kv_heads * (d_k + d_v) * BF16,
        decode=lambda t: heads * seen(t) * (d_k + d_v),
        prefill=lambda t: heads * scores(t, window) * (d_k + d_v),
    )


def latent(count, heads, rank, rope, nope, d_v, absorbed):
    """DeepSeek's latent attention: a latent of rank numbers and one rotated key of rope."""
    up = rank * heads * (nope + d_v)  # per cached token: its keys and values, rebuilt
    fold = heads * rank * (nope + d_v)  # per query: into the latent space, and back up

    def decode(t):
        if absorbed:  # each head scores the latent and the rotated key, and sums latents
            return heads * t * (rank + rope + rank) + fold
        return t * up + heads * t * (nope + rope + d_v)  # rebuild, then multi-head attention

    return Layers(
        count,
        cache=lambda t: t * (rank + rope) * BF16,
        decode=decode,
        prefill=lambda t: t * up + heads * scores(t) * (nope + rope + d_v),  # plain form
    )


def delta_net(count, heads, d_k, d_v, chunk=64):
    """Gated DeltaNet: a d_k x d_v state per head; in prefill, chunks of chunk tokens."""
    return Layers(
        count,
        cache=lambda t: heads * d_k * d_v * FP32,
        decode=lambda t: heads * 4 * d_k * d_v,  # decay, recall, write and read the state
        prefill=lambda t: t * heads * (3 * d_k * d_v + chunk * (d_k + d_v)),
    )


# %% [markdown]
# ## The models
#
# Each variant in the model its page uses, from the model's `config.json` (numbers of
# layers and heads, head sizes) and its report:
#
# - **Multi-head and grouped-query**: Llama 3 8B, 32 layers of 32 query heads of 128
#   features, with its 8 key-value heads, and with 32 as if every head kept its own
#   ([Grouped-query attention](grouped-query-attention.py)).
# - **Sliding window**: Gemma 3 27B, 62 layers of 32 query heads and 16 key-value heads of
#   128 features; 52 layers see a window of 1,024 tokens, 10 see everything
#   ([Sliding-window attention](sliding-window-attention.py)).
# - **Latent**: DeepSeek-V3, 61 layers of 128 heads, a latent of 512 numbers and a rotated
#   key of 64 per token; each head's key has 128 features from the latent and the 64
#   rotated ones, its value 128 ([Multi-head latent attention](latent-attention.py)).
#   Plain, and with both up-projections absorbed.
# - **Gated DeltaNet**: Qwen3-Next 80B, 48 layers: 36 Gated DeltaNet layers with 32 heads
#   of 128 by 128 numbers, and 12 gated attention layers with 16 query heads and 2
#   key-value heads of 256 features (`linear_num_value_heads` 32, `linear_key_head_dim`
#   and `linear_value_head_dim` 128, `num_key_value_heads` 2, `head_dim` 256). Its
#   short convolution keeps 3 past inputs more per layer, left out here
#   ([Gated attention and linear attention](linear-attention.py)).

# %%
MODELS = {
    "multi-head (Llama 3 8B, 32)": [attention(32, 32, 32, 128, 128)],
    "grouped-query (Llama 3 8B)": [attention(32, 32, 8, 128, 128)],
    "sliding window (Gemma 3 27B)": [
        attention(52, 32, 16, 128, 128, window=1024),
        attention(10, 32, 16, 128, 128),
    ],
    "latent, plain (DeepSeek-V3)": [latent(61, 128, 512, 64, 128, 128, absorbed=False)],
    "latent, absorbed (DeepSeek-V3)": [latent(61, 128, 512, 64, 128, 128, absorbed=True)],
    "Gated DeltaNet (Qwen3-Next)": [delta_net(36, 32, 128, 128), attention(12, 16, 2, 256, 256)],
}


def total(model, cost, num_tokens):
    return sum(group.count * getattr(group, cost)(num_tokens) for group in MODELS[model])


K8, K128 = 8192, 131072
print(f"{'':<31}{'cache grows':>12}{'read per step':>25}{'per step':>11}{'prefill':>9}")
print(f"{'':<31}{'per token':>12}{'8K':>12}{'128K':>13}{'128K':>11}{'8K':>9}")
for model in MODELS:
    grows = total(model, "cache", K128 + 1) - total(model, "cache", K128)
    read_8k, read_128k = total(model, "cache", K8), total(model, "cache", K128)
    step, prefill = total(model, "decode", K128), total(model, "prefill", K8)
    print(
        f"{model:<31}{grows / 2**10:>8.1f} KiB{read_8k / 2**30:>8.2f} GiB{read_128k / 2**30:>9.2f}"
        f" GiB{step / 1e9:>9,.0f} G{prefill / 1e12:>7.1f} T"
    )
plain = total("latent, plain (DeepSeek-V3)", "decode", K128)
absorbed = total("latent, absorbed (DeepSeek-V3)", "decode", K128)
print(f"latent, absorbed / plain, per step at 128K: {absorbed / plain:.3f}")
print("latent, multiply-adds per score and head: plain", 128 + 64 + 128, "absorbed", 512 + 64 + 512)
print(f"Gated DeltaNet's state, 36 layers: {36 * 32 * 128 * 128 * FP32 / 2**20:.0f} MiB")
# Out:
#                                 cache grows            read per step   per step  prefill
#                                   per token          8K         128K       128K       8K
# multi-head (Llama 3 8B, 32)       512.0 KiB    4.00 GiB    64.00 GiB       34 G    8.8 T
# grouped-query (Llama 3 8B)        128.0 KiB    1.00 GiB    16.00 GiB       34 G    8.8 T
# sliding window (Gemma 3 27B)       80.0 KiB    1.03 GiB    10.41 GiB       11 G    6.1 T
# latent, plain (DeepSeek-V3)        68.6 KiB    0.54 GiB     8.58 GiB  134,468 G   92.2 T
# latent, absorbed (DeepSeek-V3)     68.6 KiB    0.54 GiB     8.58 GiB    1,114 G   92.2 T
# Gated DeltaNet (Qwen3-Next)        24.0 KiB    0.26 GiB     3.07 GiB       13 G    3.9 T
# latent, absorbed / plain, per step at 128K: 0.008
# latent, multiply-adds per score and head: plain 320 absorbed 1088
# Gated DeltaNet's state, 36 layers: 72 MiB

# %% [markdown]
# Per decoded token, "read" is the whole cache (or state) of one sequence, and "per step"
# counts billions of multiply-adds in attention alone; "prefill" is trillions for a prompt
# of 8,192 tokens. The rows are different models, from 8B to 671B parameters (DeepSeek-V3,
# its technical report): compare how each column grows, not only the rows.
#
# - **Grouped-query attention** reads a quarter of what the multi-head cache would, at the
#   same arithmetic: sharing saves bytes, not work.
# - **The window** stops 52 of Gemma's 62 layers from growing: past 1,024 tokens, only the
#   10 global layers add to the cache, and a kernel that skips the blocks outside the
#   window saves most of their prefill too.
# - **Latent attention** keeps 576 numbers per token and layer for 128 heads. The plain
#   form rebuilds every cached token's keys and values at every step, by far the largest
#   arithmetic of the table. Absorbed, it reads the same bytes and needs less than a
#   hundredth of that work, but each head scores 576 numbers and sums 512 per cached token,
#   1,088 multiply-adds where a head with 192-number keys and 128-number values needs 320.
#   Its prefill is counted in the plain form: there the keys are built once anyway, and a
#   score costs 320 multiply-adds instead of 1,088.
# - **Gated DeltaNet** keeps 72 MiB of state in its 36 linear layers whatever the length,
#   so that all of its growth, 24 KiB per token, is in its 12 attention layers.
#
# ## What the papers measured
#
# Memory and arithmetic are only half of the choice. The quality each variant gave, where
# the same models were trained with and without it, as the earlier pages cite it:
#
# | variant | evidence | source |
# | --- | --- | --- |
# | grouped-query | T5-XXL with 8 key-value groups: 47.1 on average over summarization, translation and question answering, against 47.2 with multi-head attention | Ainslie et al., 2023, Table 1 |
# | sliding window | from one local layer per global layer to 7, the validation perplexity of 2B and 9B models changed very little | Gemma Team, 2025, section 5.2, Figure 3 |
# | latent | a mixture-of-experts model of about 16B parameters: 50.0 on MMLU with latent attention, 48.7 with multi-head attention | DeepSeek-AI, 2024, appendix D.2, Table 9 |
# | Gated DeltaNet | models of 1.3B parameters on tasks that recall a piece of the input, cut to 2K tokens: 30.6 on average, against 37.0 for a Transformer; hybrids with attention layers 39.0 and 40.1 | Yang, Kautz and Hatamizadeh, 2025, Table 4 |
#
# No single number ranks them: each paper trained its own models on its own data.
#
# ## Decoding, measured
#
# The table above counts; this measures. One layer of each variant, at a small size
# (512 features, 8 heads, float32, on the CPU of the machine that built this page), reads a
# prompt into its cache, and the time of the next step is measured with the cache as the
# prompt left it. The package's classes append to their caches with `torch.cat`, which
# copies the whole cache at every step, and grouped-query attention repeats its shared keys
# and values for each head it serves: the times grow with the cache's bytes, as a real
# kernel's do, but a real kernel, which writes into a preallocated cache and reads each
# shared head once, is faster.

# %%
D, HEADS = 512, 8
VARIANTS = {
    "multi-head": lambda: GroupedQueryAttention(D, D, 0.0, HEADS, num_kv_groups=HEADS),
    "grouped-query, 2 groups": lambda: GroupedQueryAttention(D, D, 0.0, HEADS, num_kv_groups=2),
    "sliding window, 1,024": lambda: MultiHeadAttentionWithSWA(
        D, D, 0.0, HEADS, sliding_window_size=1024
    ),
    "latent, plain": lambda: MultiHeadLatentAttention(D, D, 0.0, HEADS),
    "latent, absorbed": lambda: MultiHeadLatentAttention(D, D, 0.0, HEADS, absorb=True),
    "Gated DeltaNet": lambda: GatedDeltaNet(D, D, 0.0, HEADS, chunk_size=64),
}


@torch.no_grad()
def tokens_per_second(name, contexts):
    """Decoding speed of one layer after each context, one prompt read on into the cache."""
    torch.manual_seed(0)
    layer = VARIANTS[name]().eval()
    prompt, token = torch.randn(1, contexts[-1], D), torch.randn(1, 1, D)
    rates, read = [], 0
    for context in contexts:
        for start in range(read, context, 1024):  # the prompt read on, in chunks
            layer(prompt[:, start : min(start + 1024, context)], use_cache=True)
        read, position = context, layer.ptr_current_pos
        cached = {key: value.clone() for key, value in layer.named_buffers() if value is not None}

        def restore(cached=cached, position=position):  # the cache as the prompt left it
            for key, value in cached.items():
                setattr(layer, key, value)
            layer.ptr_current_pos = position

        def step(restore=restore):
            restore()
            layer(token, use_cache=True)

        step()  # warm up
        timer = benchmark.Timer(stmt="step()", globals={"step": step})
        rates.append(1 / timer.blocked_autorange(min_run_time=0.2).median)
        restore()  # before the prompt is read on
    return rates


# %% nondeterministic="timings depend on the machine that builds the site"
contexts = [1024, 2048, 4096, 8192, 16384]
started = time.perf_counter()
rates = {name: tokens_per_second(name, contexts) for name in VARIANTS}
print(f"{'tokens per second':<26}" + "".join(f"{c:>9,}" for c in contexts))
for name, row in rates.items():
    print(f"{name:<26}" + "".join(f"{rate:>9,.0f}" for rate in row))
threads = torch.get_num_threads()
print(f"measured in {time.perf_counter() - started:.0f} s, {threads} thread(s)")

# %% nondeterministic="a plot of the timings above"
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
for name, row in rates.items():
    ax.plot(contexts, row, marker="o", label=name)
ax.set(xscale="log", yscale="log", xlabel="tokens in the cache", ylabel="tokens per second")
ax.set_xticks(contexts, [f"{c:,}" for c in contexts])
ax.minorticks_off()
ax.legend(fontsize="small")
show_figure(
    fig,
    caption=(
        "Figure 1. Decoding speed of one layer of each variant as the context grows, measured "
        "when this page was built (512 features, 8 heads, float32, CPU)."
    ),
    alt=(
        "A log-log chart of tokens per second against tokens in the cache, from 1,024 to "
        "16,384. The multi-head, grouped-query and plain latent lines fall as the cache "
        "grows; the absorbed latent line falls more slowly and stays above them; the "
        "sliding-window and Gated DeltaNet lines stay flat."
    ),
)

# %% [markdown]
# Whatever the machine, the shapes of these lines hold, and this cell checks them on the
# timings above: the caches that grow slow down the step, the window and the state do not,
# and absorbing the up-projections beats rebuilding keys and values.


# %%
def rate(name, context):
    return rates[name][contexts.index(context)]


def slows_down(name):
    """How many times slower a step is after 16,384 tokens than after 1,024."""
    return rate(name, 1024) / rate(name, 16384)


# Factors of 4: a busy machine can halve one measurement, not turn 30 times into 4.
print("from 1,024 to 16,384 tokens, multi-head slows by over 4x:", slows_down("multi-head") > 4)
print("the window by less than 4x:", slows_down("sliding window, 1,024") < 4)
print("the state by less than 4x:", slows_down("Gated DeltaNet") < 4)
print("absorbed beats plain at 16,384 by 4x or more:",
      rate("latent, absorbed", 16384) > 4 * rate("latent, plain", 16384))  # fmt: skip
# Out:
# from 1,024 to 16,384 tokens, multi-head slows by over 4x: True
# the window by less than 4x: True
# the state by less than 4x: True
# absorbed beats plain at 16,384 by 4x or more: True

# %% [markdown]
# `nox -s bench` runs the same measurement with more repeats (`benchmarks/decode.py`), and
# the training of Gated DeltaNet token by token against chunk by chunk
# (`benchmarks/chunkwise.py`).
