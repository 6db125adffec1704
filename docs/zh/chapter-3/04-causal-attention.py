# %% [markdown] english="fe5bdc3dcb52"
# # 因果注意力
#
# 书中 3.5 节：隐藏未来的词。语言模型的训练目标是根据前面的词元（token）预测下一个词元。如果在训练中位置 $t$ 能够关注 $t$ 之后的位置，它就可以直接照抄答案。**因果注意力**（causal attention，也称掩码注意力，masked attention）只让每个词元关注它自己以及它之前的词元。

# %%
import torch

# The class cells below, which the build fills in from the package, use the names
# marked noqa: ruff cannot see those uses in this file.
from torch import Tensor, nn  # noqa: F401

from attention_mechanisms import CausalAttention, SelfAttention_v2, causal_mask
from attention_mechanisms.checks import check_dropout, check_size, check_tokens  # noqa: F401
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
# ## 3.5.1 应用因果注意力掩码
#
# 我们沿用上一页的 `SelfAttention_v2`（种子 789），并像之前一样计算它的注意力权重（attention weights）：

# %%
torch.manual_seed(789)
sa_v2 = SelfAttention_v2(d_in=3, d_out=2)

queries = sa_v2.W_query(inputs)
keys = sa_v2.W_key(inputs)
attn_scores = queries @ keys.T
attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
print(attn_weights)
# Out:
# tensor([[0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
#         [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
#         [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
#         [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
#         [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<SoftmaxBackward0>)

# %% [markdown]
# ### 第一种方法：把未来清零，再重新归一化
#
# 对角线以上的每个元素，都是某个查询（query）在查看它之后的词元。一个由 1 组成的下三角矩阵（`torch.tril`）标出了可以保留的位置：

# %%
context_length = attn_scores.shape[0]
mask_simple = torch.tril(torch.ones(context_length, context_length))
print(mask_simple)
# Out:
# tensor([[1., 0., 0., 0., 0., 0.],
#         [1., 1., 0., 0., 0., 0.],
#         [1., 1., 1., 0., 0., 0.],
#         [1., 1., 1., 1., 0., 0.],
#         [1., 1., 1., 1., 1., 0.],
#         [1., 1., 1., 1., 1., 1.]])

# %%
masked_simple = attn_weights * mask_simple
print(masked_simple)
# Out:
# tensor([[0.1921, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.2041, 0.1659, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.2036, 0.1659, 0.1662, 0.0000, 0.0000, 0.0000],
#         [0.1869, 0.1667, 0.1668, 0.1571, 0.0000, 0.0000],
#         [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.0000],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<MulBackward0>)

# %% [markdown]
# 各行之和不再为 1，所以把每一行除以它新的和：

# %%
row_sums = masked_simple.sum(dim=-1, keepdim=True)
masked_simple_norm = masked_simple / row_sums
print(masked_simple_norm)
# Out:
# tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
#         [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
#         [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<DivBackward0>)

# %% [markdown]
# ### 第二种方法：在 softmax 之前设为 $-\infty$
#
# softmax 把 $-\infty$ 映射为恰好 0（$e^{-\infty} = 0$），剩下的权重则在彼此之间归一化。因此，把未来的**分数**设为 $-\infty$，只需一次 softmax 就能得到因果权重：
#
# $$
# \alpha_{ij} = \operatorname{softmax}\left(\frac{\omega_i}{\sqrt{d_k}} + m_i\right)_j,
# \qquad m_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}
# $$
#
# 这一次，掩码（mask）标出的是要**隐藏**的位置：对角线*以上*为 1，由 `torch.triu` 配合 `diagonal=1` 得到。（把这两种约定弄混是一个经典的 bug；参见[常见陷阱](pitfalls.py)。）

# %%
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
print(masked)
# Out:
# tensor([[0.2899,   -inf,   -inf,   -inf,   -inf,   -inf],
#         [0.4656, 0.1723,   -inf,   -inf,   -inf,   -inf],
#         [0.4594, 0.1703, 0.1731,   -inf,   -inf,   -inf],
#         [0.2642, 0.1024, 0.1036, 0.0186,   -inf,   -inf],
#         [0.2183, 0.0874, 0.0882, 0.0177, 0.0786,   -inf],
#         [0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078]],
#        grad_fn=<MaskedFillBackward0>)

# %%
attn_weights = torch.softmax(masked / keys.shape[-1] ** 0.5, dim=-1)
print(attn_weights)
# Out:
# tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
#         [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
#         [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
#         [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
#         [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
#        grad_fn=<SoftmaxBackward0>)

# %% [markdown]
# 两种方法的结果一致（在舍入误差范围内）。在 softmax 之后重新归一化，在数学上等同于把被隐藏的元素排除在 softmax 之外，因为公共因子 $\sum_k e^{\omega_{ik} / \sqrt{d_k}}$（包括缩放在内）会被约掉：

# %%
print("same weights:", torch.allclose(attn_weights, masked_simple_norm))
# Out:
# same weights: True

# %% [markdown]
# 包中的 [`causal_mask`][attention_mechanisms.functional.causal_mask] 以布尔张量的形式构建同样的隐藏掩码：

# %%
print(causal_mask(context_length))
print("same as the triu mask:", torch.equal(causal_mask(context_length), mask.bool()))
# Out:
# tensor([[False,  True,  True,  True,  True,  True],
#         [False, False,  True,  True,  True,  True],
#         [False, False, False,  True,  True,  True],
#         [False, False, False, False,  True,  True],
#         [False, False, False, False, False,  True],
#         [False, False, False, False, False, False]])
# same as the triu mask: True

# %% caption="图 3. 因果注意力权重：对角线以上的每个元素都为零。" alt="6×6 因果注意力权重的热力图。上三角全为零。Your 只关注自身，权重为 1.00；journey 在 Your 和自身之间按 0.55 和 0.45 分配；最后一行 step 在全部六个词元上的权重介于 0.15 和 0.19 之间。"
show_attention(
    attn_weights,
    tokens,
    caption="Figure 3. Causal attention weights: every entry above the diagonal is zero.",
    alt=(
        "Heatmap of the 6 by 6 causal attention weights. The upper triangle is all zeros. "
        "Your attends only to itself with weight 1.00; journey splits 0.55 and 0.45 "
        "between Your and itself; the last row, step, spreads between 0.15 and 0.19 over "
        "all six tokens."
    ),
)
# Out:
# AttentionFigure('Figure 3. Causal attention weights: every entry above the diagonal is zero.')

# %% [markdown]
# 现在第一行是 $[1, 0, 0, 0, 0, 0]$：第一个词元之前没有任何词元，所以它只能关注自己。
#
# ## 3.5.2 用 dropout 额外遮蔽注意力权重
#
# **dropout** 在训练期间把随机选中的值置零，使模型无法依赖其中任何一个特定的值；在推理时它会被关闭。在注意力中，dropout 作用于注意力权重。设丢弃率（dropout rate）为 $p$，每个值以概率 $p$ 被置零，保留下来的值则乘以 $1 / (1 - p)$，这样平均而言，每个权重的大小保持不变：
#
# $$
# \mathbb{E}[\text{dropout}(a)] = (1 - p) \cdot \frac{a}{1 - p} + p \cdot 0 = a
# $$
#
# 当 $p = 0.5$ 时，保留下来的值会翻倍。下面在一个全 1 矩阵上演示：

# %% nondeterministic="which entries dropout zeroes depends on the PyTorch version and platform; the next cell checks the rule instead"
torch.manual_seed(123)
dropout = torch.nn.Dropout(0.5)
example = torch.ones(6, 6)
dropped = dropout(example)
print(dropped)

# %% [markdown]
# > **你的置零模式可能不同**。哪些元素被置零，取决于你的 PyTorch 版本和平台如何生成随机数，所以即使种子相同，书中的打印结果和你的也可能呈现不同的模式。在任何环境下都必须成立的是这条规则：每个元素要么是 0，要么是 $1 / (1 - p) = 2$，并且大约一半是 0。

# %%
kept = dropped != 0
fraction_zeroed = 1 - kept.float().mean().item()
print("every entry is 0 or 2:", set(dropped.unique().tolist()) <= {0.0, 2.0})
print("survivors are exactly 1 / (1 - p) = 2:", bool((dropped[kept] == 2.0).all()))
# With 36 entries, the zeroed fraction is 0.5 give or take 0.08 (one standard deviation).
print("between a quarter and three quarters zeroed:", 0.25 <= fraction_zeroed <= 0.75)
# Out:
# every entry is 0 or 2: True
# survivors are exactly 1 / (1 - p) = 2: True
# between a quarter and three quarters zeroed: True

# %% [markdown]
# 把 dropout 应用于因果权重，会去掉一部分连接；剩下的权重翻倍，因此各行之和不再为 1，但平均而言仍保持这个和。

# %% nondeterministic="a dropout pattern again: it depends on the PyTorch version and platform"
torch.manual_seed(123)
dropped_weights = dropout(attn_weights)
print(dropped_weights)

# %% caption="图 4. 以 p = 0.5 施加 dropout 之后的因果权重（保留下来的值翻倍）。" alt="施加丢弃率为 0.5 的 dropout 之后的因果注意力权重热力图。除了对角线以上的零之外，dropout 还随机把其余元素中的一部分置零，而每个保留下来的权重都是它在图 3 中的两倍。"
show_attention(
    dropped_weights,
    tokens,
    caption="Figure 4. The causal weights after dropout with p = 0.5 (survivors doubled).",
    alt=(
        "Heatmap of the causal attention weights after dropout with rate 0.5. Besides the "
        "zeros above the diagonal, dropout has zeroed some of the remaining entries at "
        "random, and each surviving weight is twice its value in Figure 3."
    ),
)
# Out:
# AttentionFigure('Figure 4. The causal weights after dropout with p = 0.5 (survivors doubled).')

# %% [markdown]
# ## 3.5.3 实现一个紧凑的因果注意力类
#
# 真实的输入是成批（batch）到来的。把这个句子堆叠两次，就得到一个形状为 `(batch, num_tokens, d_in)` 的批次：

# %%
batch = torch.stack((inputs, inputs), dim=0)
print(batch.shape)
# Out:
# torch.Size([2, 6, 3])

# %% [markdown]
# [`CausalAttention`][attention_mechanisms.causal.CausalAttention] 把本页的所有内容结合在了一起：`nn.Linear` 投影、$-\infty$ 掩码、缩放、softmax，以及作用在权重上的 dropout。下面是包中原样发布的版本；该单元格会在本笔记本中定义它（第一个单元格已经导入了它所需的内容），所以你可以修改它，再重新运行它后面的单元格：

# %% include="attention_mechanisms.causal.CausalAttention"

# %% [markdown]
# 逐行对照上面的步骤：
#
# - `__init__` 按查询、键、值的顺序创建三个投影，然后是 `self.dropout = nn.Dropout(...)`，并把掩码 `torch.triu(torch.ones(context_length, context_length), diagonal=1)` 注册为缓冲区（buffer，见下文）。`context_length` 是该模块将会遇到的最长序列的长度。
# - `forward` 检查 `x` 并读取 `num_tokens`，相当于书中的 `b, num_tokens, d_in = x.shape`，只是换了一种写法，让单个序列 `(T, d_in)` 也能使用。
# - `keys`、`queries`、`values`：三个投影。
# - `attn_scores = queries @ keys.transpose(-2, -1)`：相当于书中针对批次的 `transpose(1, 2)`，它交换每个序列的词元维度和特征维度。
# - `attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)`：取掩码的左上角，以适应比 `context_length` 短的输入；末尾的 `_` 表示原地填充。对角线永远不会被隐藏，所以不会有哪一行全是 $-\infty$。
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`，然后是 `attn_weights = self.dropout(attn_weights)`，后者只在训练模式下才会把权重置零。
# - `context_vec = attn_weights @ values`：形状为 `(b, num_tokens, d_out)`。
#
# 在这个批次上，设 `dropout=0.0`，句子的两个副本会得到相同的上下文向量（context vector），而且第一个词元对应的那一行只取决于第一个词元：

# %%
torch.manual_seed(123)
context_length = batch.shape[1]
ca = CausalAttention(d_in=3, d_out=2, context_length=context_length, dropout=0.0)
context_vecs = ca(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
# Out:
# tensor([[[-0.4519,  0.2216],
#          [-0.5874,  0.0058],
#          [-0.6300, -0.0632],
#          [-0.5675, -0.0843],
#          [-0.5526, -0.0981],
#          [-0.5299, -0.1081]],
#
#         [[-0.4519,  0.2216],
#          [-0.5874,  0.0058],
#          [-0.6300, -0.0632],
#          [-0.5675, -0.0843],
#          [-0.5526, -0.0981],
#          [-0.5299, -0.1081]]], grad_fn=<UnsafeViewBackward0>)
# context_vecs.shape: torch.Size([2, 6, 2])

# %% [markdown]
# ### 为什么掩码是缓冲区
#
# 这个类用 `self.register_buffer("mask", ...)` 保存掩码，而不是用普通属性 `self.mask = ...`。缓冲区是模块状态的一部分，但它不是可训练参数，这带来两个结果：
#
# 1. **它随模块一起迁移**。`model.to("cuda")` 或 `model.to(torch.float64)` 会同时迁移参数*和*缓冲区；普通属性则会被留在 CPU 上，于是在 GPU 上的第一次前向传播就会因设备不匹配而失败。
# 2. **它会被保存和加载**。`state_dict()` 包含缓冲区，所以检查点会连同掩码一起保存。
#
# 不用 GPU 也很容易看到这两点：

# %%
print("parameters:", [name for name, _ in ca.named_parameters()])
print("buffers:   ", [name for name, _ in ca.named_buffers()])
print("state_dict:", list(ca.state_dict()))
# Out:
# parameters: ['W_query.weight', 'W_key.weight', 'W_value.weight']
# buffers:    ['mask']
# state_dict: ['mask', 'W_query.weight', 'W_key.weight', 'W_value.weight']

# %%
ca64 = CausalAttention(3, 2, context_length, 0.0).to(torch.float64)
print("mask dtype after .to(torch.float64):", ca64.mask.dtype)
ca_meta = CausalAttention(3, 2, context_length, 0.0).to("meta")  # a device without data
print("mask device after .to('meta'):", ca_meta.mask.device)
# Out:
# mask dtype after .to(torch.float64): torch.float64
# mask device after .to('meta'): meta

# %% [markdown]
# [常见陷阱](pitfalls.py)页面展示了使用普通属性会出什么问题。接下来，我们将并排运行多个因果注意力头：[多头注意力](05-multi-head-attention.py)。
