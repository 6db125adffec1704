# %% [markdown] english="41ca522b4178"
# # 让注意力更快
#
# 书外拓展。第 3 章的 `MultiHeadAttention` 是为了便于理解而写的：三个投影、一个显式的分数矩阵、一个掩码（mask）、一次 softmax、第二次矩阵乘积。生产环境中的模型计算的是同一个函数，但代码看起来并不一样。本页展示每一处改动带来了什么收益，这些数据都是**在构建本页时**、在构建它的那台机器上**实测的**，因此下面的计时反映的是那台机器的情况，每次构建都会有所不同。要在 GPT-2 的规模上运行完整的基准测试，请运行 `nox -s bench`。

# %%
import math
import platform

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)
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
# ## 注意力的计算量有多大
#
# 对于一个由 $b$ 个序列组成的批次（batch），每个序列有 $T$ 个词元（token），共 $h$ 个大小为 $d$ 的头，注意力对每个头做两次矩阵乘法：$Q K^\top$（$T \times d$ 乘以 $d \times T$）和 $P V$（$T \times T$ 乘以 $T \times d$）。每次乘法有 $T^2 d$ 次乘加运算，即 $2 T^2 d$ 次浮点运算，所以注意力的开销是
#
# $$
# \text{FLOPs}_\text{attention} = 4 \, b \, h \, T^2 d ,
# $$
#
# 在因果掩码下，如果实现会跳过被隐藏的那一半，开销就减半。四个投影（$W_q$、$W_k$、$W_v$、$W_o$，每个都是 $d_\text{model} \times d_\text{model}$）还要再加上 $8 \, b \, T \, d_\text{model}^2$。投影的开销随 $T$ 线性增长，注意力的开销则按平方增长：


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
# 在 GPT-2 small 的 1,024 个词元的上下文长度下，投影的开销仍然更大；到了 4,096 个词元，注意力的开销已是投影的两倍多。分数矩阵本身也必须存储下来：共 $b \cdot h \cdot T^2$ 个数，在 4,096 个词元、12 个头的情况下，仅一个序列以 float32 存储就已经需要 768 MiB：

# %%
for t in (256, 1024, 4096):
    print(f"T={t:>5}: one float32 score matrix for 12 heads = {12 * t * t * 4 / 2**20:8.1f} MiB")
# Out:
# T=  256: one float32 score matrix for 12 heads =      3.0 MiB
# T= 1024: one float32 score matrix for 12 heads =     48.0 MiB
# T= 4096: one float32 score matrix for 12 heads =    768.0 MiB

# %% [markdown]
# ## 计算同一件事的三种方式
#
# 1. **教科书式的类**，[`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention]：三个 `nn.Linear` 投影，然后是分数、掩码、softmax 以及与值的乘积，每一步都产生一个单独的张量。
# 2. **一个投影**：[`FusedMultiHeadAttention`][attention_mechanisms.fused.FusedMultiHeadAttention] 把 $W_q$、$W_k$、$W_v$ 堆叠成一个 `nn.Linear(d_in, 3 * d_out)`。一次大的矩阵乘法比三次小的更能让硬件保持忙碌。
# 3. **一个注意力内核**（kernel）：同一个类调用 `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`。PyTorch 会选择一个融合实现（在较新的 GPU 上是 FlashAttention，在 CPU 上是 FlashAttention 风格的内核），它逐块地应用掩码、softmax 和两次乘法，从不存储 $T \times T$ 矩阵。
#
# 这几个类计算的是同一个函数。`from_multihead_attention` 把一个教科书式模块的权重复制到一个融合模块中，而 PyTorch 自带的 `torch.nn.MultiheadAttention` 也能装下这些权重：它的 `in_proj_weight` 就是三个投影矩阵堆叠在一起，和融合模块一样，而且教科书式的投影没有偏置：

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
# ### 实测
#
# 为了让本页的构建时间短一些，这里使用比 GPT-2 更小的形状：4 个长度为 512 个词元的序列，768 维，12 个头，float32，只做前向传播，所有模块都处于评估模式（`torch.nn.MultiheadAttention` 只有在这种模式下才会走它的推理快速路径）。

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
# 这里的 GFLOP/s 按完整的注意力 FLOPs 计算，就好像什么都没有跳过一样。跳过被隐藏的那一半的因果内核，实际做的工作比这个计数要少，所以它的这个数值会高估它实际的计算速率。
#
# ## 为什么融合内核需要的内存更少
#
# 下面只看注意力这一步，不含投影，观察序列变长时的情况（一个序列，12 个大小为 64 的头）：教科书式的步骤会存储完整的分数矩阵，而融合和分块的步骤不会，所以只有后两者能继续扩展到长上下文而不耗尽内存。最后几行输出将分块步骤与教科书式步骤进行比较，并给出在构建本页的机器上，每种长度下哪一种步骤最快。


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

# %% nondeterministic="a plot of the timings above" caption="图 7. 序列变长时单独的注意力步骤：左为构建本页时测得的时间，右为根据张量形状算出的内存。" alt="两张双对数坐标的折线图。左图：教科书式、融合和分块三种实现的注意力步骤在 256 到 2048 个词元下的耗时；三者都随词元数急剧上升；每种长度下最快的实现见上一个单元格的输出。右图：该步骤必须保存的内存，教科书式步骤随词元数的平方增长，融合步骤则线性增长。"
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
# ## 分块算法，一步一步来
#
# 怎样才能在不同时拿到一行全部分数的情况下计算 softmax？[`tiled_attention`][attention_mechanisms.tiled.tiled_attention] 函数沿用 FlashAttention 的做法：它每次遍历一块键，并为每个查询（query）行维护三个累积量：目前为止的最大分数 $m$、和 $\ell = \sum_j e^{s_j - m}$，以及未归一化的输出 $o = \sum_j e^{s_j - m} v_j$。当新的一块把最大值从 $m$ 提高到 $m'$ 时，之前累积的所有量都要乘以 $e^{m - m'}$ 重新缩放。
#
# 下面是一个查询行对八个键的计算，分成两块，每块四个。最大的分数 2.5 在第二块中，所以第二块提高了最大值，第一块的累积和随之缩小：

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
# 第一块从 $m = -\infty$ 开始，所以它的重新缩放因子是 $e^{-\infty} = 0$：这时还没有什么需要缩小的。第二块把 $m$ 从 1.2 提高到 2.5，于是在加上第二块的各项之前，第一块的 $\ell$ 和 $o$ 要先乘以 $e^{1.2 - 2.5} \approx 0.2725$。在线计算和一次性计算的结果在打印出的各位数字上完全一致。把同样的代码推广到整块的查询，并跳过完全位于某个查询块未来的键，就得到了 `tiled_attention`；无论是否因果，它在 float64 下与普通注意力的结果都相差不超过 1e-12：

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
# 用 Python 编写时，分块形式要为它的循环付出代价：每一块都是一次单独的小矩阵乘法，由解释器逐个启动。融合内核在一个 GPU 或 CPU 内核内部运行同样的算法，每一块都留在快速的片上存储中：这正是 FlashAttention 快的原因。不过，即使是 Python 版本，也从不把 $T \times T$ 矩阵写入内存，而序列越长，这一点就越重要：上面的计时展示了在构建本页的机器上，这两种开销是如何此消彼长的。
#
# ## KV 缓存
#
# 语言模型每次生成一个词元。如果没有缓存，第 $t$ 步要在全部 $t$ 个词元上重新计算注意力，尽管前 $t - 1$ 个词元的键和值并没有改变。**KV 缓存**（KV cache）把它们保存下来：每一步只对新词元做投影，并用一个查询与缓存的键计算注意力。由于新词元位于*最后*一个位置，它可以看到所有缓存的键。
#
# [`KVCache`][attention_mechanisms.fused.KVCache] 为融合模块实现了这一点。逐个输入词元，得到的输出与一次完整前向传播的输出相同：

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
# 节省之处在于：不用缓存时，生成 $n$ 个词元要重新处理 $1 + 2 + \dots + n$ 个位置；使用缓存时，只需处理 $n$ 个。

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
# ## 要点回顾
#
# | 改动 | 节省了什么 |
# | --- | --- |
# | 一个 QKV 投影 | 三次矩阵乘法变成一次更大、硬件利用率更高的乘法 |
# | 融合注意力内核 | 内存中不再有 $T \times T$ 矩阵；掩码、softmax 和两次乘法一遍完成 |
# | 跳过因果掩码隐藏的那一半 | 注意力的 FLOPs 减半 |
# | KV 缓存 | 生成时，每个新词元的计算量与上下文长度成正比，而不是与它的平方成正比 |
#
# 这些改动都不会改变所计算的函数：给定相同的权重，本页的每个模块都会在舍入误差范围内（上面为 1e-5）给出与教科书式模块相同的输出，本包的测试也会检查这一点。
