# %% [markdown] english="9361a7c26a87"
# # 多头注意力
#
# 书中 3.6 节：把单头注意力扩展为多头注意力。一个因果注意力模块只能学习一种词元（token）之间的关联方式。**多头注意力**（multi-head attention）并行运行多个这样的模块，即多个*头*（head），每个头都有自己的权重，因此每个头都可以学习一种不同的关系（某个代词指代哪个词、哪个动词与哪个主语搭配……）。它们的输出最后被拼接成每个词元的一个向量。

# %%
import torch

# The class cells below, which the build fills in from the package, use the names
# marked noqa: ruff cannot see those uses in this file.
from torch import Tensor, nn  # noqa: F401

from attention_mechanisms import (  # noqa: F401
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    scaled_dot_product_attention,
)
from attention_mechanisms.checks import (  # noqa: F401
    check_dropout,
    check_heads,
    check_size,
    check_tokens,
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
batch = torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)

# %% [markdown]
# ## 3.6.1 堆叠多个单头注意力层
#
# 最直接的实现是保存一个 `CausalAttention` 模块的列表，并沿最后一个维度拼接它们的输出：
#
# $$
# \operatorname{MultiHead}(X) = \left[\operatorname{head}_1(X) \,\|\, \operatorname{head}_2(X)
# \,\|\, \cdots \,\|\, \operatorname{head}_h(X)\right]
# $$
#
# 这就是 [`MultiHeadAttentionWrapper`][attention_mechanisms.multihead.MultiHeadAttentionWrapper]，下面是包中原样发布的版本（该单元格在这里定义它，所以你可以修改它，然后继续往下运行）：

# %% include="attention_mechanisms.multihead.MultiHeadAttentionWrapper"

# %% [markdown]
# `__init__` 构建 `num_heads` 个相互独立的 `CausalAttention` 模块，每个模块都有自己的投影，并把它们放在一个 `nn.ModuleList` 中，使它们的参数归属于这个包装器。`forward` 在同一个 `x` 上依次运行它们，并用 `torch.cat(..., dim=-1)` 拼接它们的输出。两个头各自 `d_out=2`，每个词元就得到 $2 \times 2 = 4$ 个输出特征：

# %%
torch.manual_seed(123)
context_length = batch.shape[1]  # 6 tokens
d_in, d_out = 3, 2
mha = MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout=0.0, num_heads=2)

context_vecs = mha(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
# Out:
# tensor([[[-0.4519,  0.2216,  0.4772,  0.1063],
#          [-0.5874,  0.0058,  0.5891,  0.3257],
#          [-0.6300, -0.0632,  0.6202,  0.3860],
#          [-0.5675, -0.0843,  0.5478,  0.3589],
#          [-0.5526, -0.0981,  0.5321,  0.3428],
#          [-0.5299, -0.1081,  0.5077,  0.3493]],
#
#         [[-0.4519,  0.2216,  0.4772,  0.1063],
#          [-0.5874,  0.0058,  0.5891,  0.3257],
#          [-0.6300, -0.0632,  0.6202,  0.3860],
#          [-0.5675, -0.0843,  0.5478,  0.3589],
#          [-0.5526, -0.0981,  0.5321,  0.3428],
#          [-0.5299, -0.1081,  0.5077,  0.3493]]], grad_fn=<CatBackward0>)
# context_vecs.shape: torch.Size([2, 6, 4])

# %% [markdown]
# 前两列来自第一个头，后两列来自第二个头。批次（batch）中的两个句子相同，所以输出的两半也相同。
#
# 每个头都有自己的注意力模式。这些模块并不返回注意力权重（attention weights），但每个头的投影都还在，可以用来重新计算权重：

# %% caption="图 5. MultiHeadAttentionWrapper 两个头的因果注意力权重。" alt="两张并排的热力图，每个头一张，各为一个 6×6 的下三角因果注意力权重矩阵，对应词元 Your、journey、starts、with、one、step。两个头的随机权重不同，它们在前面各词元上的注意力分配方式也不同。"
with torch.no_grad():
    head_weights = torch.stack(
        [
            scaled_dot_product_attention(
                head.W_query(inputs), head.W_key(inputs), head.W_value(inputs), causal=True
            )[1]
            for head in mha.heads
        ]
    )  # (num_heads, 6, 6)
show_attention(
    head_weights,
    tokens,
    caption="Figure 5. Causal attention weights of the two heads of MultiHeadAttentionWrapper.",
    alt=(
        "Two heatmaps side by side, one per head, each a 6 by 6 lower-triangular matrix of "
        "causal attention weights over the tokens Your, journey, starts, with, one, step. "
        "The two heads, which have different random weights, spread their attention "
        "differently over the earlier tokens."
    ),
)
# Out:
# AttentionFigure('Figure 5. Causal attention weights of the two heads of MultiHeadAttentionWrapper.')

# %% [markdown]
# ### 选择输出维度
#
# 包装器的输出维度是 `d_out * num_heads`。要用两个头得到 2 维的上下文向量（context vector），就让每个头的 `d_out=1`（这也是书中的练习 3.2）：

# %%
mha_small = MultiHeadAttentionWrapper(d_in, 1, context_length, dropout=0.0, num_heads=2)
print(mha_small(batch))
# Out:
# tensor([[[0.0189, 0.2729],
#          [0.2181, 0.3037],
#          [0.2804, 0.3125],
#          [0.2830, 0.2793],
#          [0.2476, 0.2541],
#          [0.2748, 0.2513]],
#
#         [[0.0189, 0.2729],
#          [0.2181, 0.3037],
#          [0.2804, 0.3125],
#          [0.2830, 0.2793],
#          [0.2476, 0.2541],
#          [0.2748, 0.2513]]], grad_fn=<CatBackward0>)

# %% [markdown]
# ## 3.6.2 通过权重拆分实现多头注意力
#
# 包装器依次运行它的各个头，每个头做三次小的矩阵乘法。[`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention] 则一次计算所有的头：
#
# 1. 每种角色各用一个 `nn.Linear(d_in, d_out)`，一次乘法就投影出**所有**头的查询（query；键和值同理）。
# 2. 最后一个维度 `d_out` 用 `.view` **拆分**成 `num_heads` 份，每份大小为 `head_dim = d_out // num_heads`，每个头一份。
# 3. `.transpose(1, 2)` 把头维度移到词元维度之前，于是张量的形状变为 `(b, num_heads, num_tokens, head_dim)`。
# 4. 一次批量矩阵乘法算出每个头的注意力。
# 5. 把各个头重新并排放回去（`.transpose`、`.contiguous`、`.view`），再由输出投影 `out_proj` 把它们混合起来。
#
# ### 在一个小张量上追踪形状变换
#
# 取一个句子（`b = 1`），含三个词元，把 `d_out = 4` 拆分成两个大小为 2 的头。用数字 0 到 11，便于追踪每个值的去向：

# %%
b, num_tokens, num_heads, head_dim = 1, 3, 2, 2
projected = torch.arange(12.0).reshape(b, num_tokens, num_heads * head_dim)
print(projected)  # (b, num_tokens, d_out): one row per token
# Out:
# tensor([[[ 0.,  1.,  2.,  3.],
#          [ 4.,  5.,  6.,  7.],
#          [ 8.,  9., 10., 11.]]])

# %%
split = projected.view(b, num_tokens, num_heads, head_dim)
print(split)  # (b, num_tokens, num_heads, head_dim): each row cut into two heads
# Out:
# tensor([[[[ 0.,  1.],
#           [ 2.,  3.]],
#
#          [[ 4.,  5.],
#           [ 6.,  7.]],
#
#          [[ 8.,  9.],
#           [10., 11.]]]])

# %%
per_head = split.transpose(1, 2)
print(per_head)  # (b, num_heads, num_tokens, head_dim): head 0's tokens, then head 1's
# Out:
# tensor([[[[ 0.,  1.],
#           [ 4.,  5.],
#           [ 8.,  9.]],
#
#          [[ 2.,  3.],
#           [ 6.,  7.],
#           [10., 11.]]]])

# %% [markdown]
# `view` 从不移动数据：它只是用新的形状重新解释同一块内存。`transpose` 也不移动数据，它只交换两个*步幅*（stride），因此张量不再是逐行依次存储的：

# %%
print("contiguous after view:     ", split.is_contiguous(), split.stride())
print("contiguous after transpose:", per_head.is_contiguous(), per_head.stride())
# Out:
# contiguous after view:      True (12, 4, 2, 1)
# contiguous after transpose: False (12, 2, 4, 1)

# %% [markdown]
# 要把各个头重新拼接起来，我们先转置回来，再把最后两个维度展平。由于转置后的张量不是逐行存储的，`view` 之前需要先调用 `.contiguous()`，它会把数据按新的顺序复制一份（[常见陷阱](pitfalls.py)展示了省略这一步时会得到的错误）：

# %%
merged = per_head.transpose(1, 2).contiguous().view(b, num_tokens, num_heads * head_dim)
print(merged)
print("round trip is exact:", torch.equal(merged, projected))
# Out:
# tensor([[[ 0.,  1.,  2.,  3.],
#          [ 4.,  5.,  6.,  7.],
#          [ 8.,  9., 10., 11.]]])
# round trip is exact: True

# %% [markdown]
# ### 批量矩阵乘法
#
# 对于维度多于两个的张量，`@` 只对**最后两个**维度做矩阵乘法，其余维度都视为批次。这个张量的形状是 `(b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4)`：

# %%
a = torch.tensor(
    [
        [
            [
                [0.2745, 0.6584, 0.2775, 0.8573],
                [0.8993, 0.0390, 0.9268, 0.7388],
                [0.7179, 0.7058, 0.9156, 0.4340],
            ],
            [
                [0.0772, 0.3565, 0.1479, 0.5331],
                [0.4066, 0.2318, 0.4545, 0.9737],
                [0.4606, 0.5159, 0.4220, 0.5786],
            ],
        ]
    ]
)
print(a @ a.transpose(2, 3))
# Out:
# tensor([[[[1.3208, 1.1631, 1.2879],
#           [1.1631, 2.2150, 1.8424],
#           [1.2879, 1.8424, 2.0402]],
#
#          [[0.4391, 0.7003, 0.5903],
#           [0.7003, 1.3737, 1.0620],
#           [0.5903, 1.0620, 0.9912]]]])

# %% [markdown]
# 也就是每个头一个 $3 \times 3$ 的乘积，在一次调用中全部算完。逐个头计算会得到相同的数字：

# %%
first_head = a[0, 0, :, :]
second_head = a[0, 1, :, :]
print("first head:\n", first_head @ first_head.T)
print("second head:\n", second_head @ second_head.T)
# Out:
# first head:
#  tensor([[1.3208, 1.1631, 1.2879],
#         [1.1631, 2.2150, 1.8424],
#         [1.2879, 1.8424, 2.0402]])
# second head:
#  tensor([[0.4391, 0.7003, 0.5903],
#         [0.7003, 1.3737, 1.0620],
#         [0.5903, 1.0620, 0.9912]])

# %% [markdown]
# ### 这个类
#
# 把这些组合在一起，就得到包中的 [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention]，下面按原样展示并定义它：

# %% include="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# 逐行对照上面追踪过的步骤：
#
# - `__init__` 检查各个尺寸，令 `head_dim = d_out // num_heads`（如果 `d_out` 不能被均分，`check_heads` 会拒绝它），然后创建 `W_query`、`W_key`、`W_value`，接着是 `out_proj`、`dropout` 和 `mask` 缓冲区（buffer）。正是这种创建顺序，使 `torch.manual_seed(123)` 能得到书中的数字。
# - `forward` 把单个序列当作大小为 1 的批次，然后读取 `b, num_tokens`。
# - 三个投影得到 `(b, num_tokens, d_out)`；`.view(b, num_tokens, num_heads, head_dim)` 把最后一个维度拆分成多个头，`.transpose(1, 2)` 再把头维度提到前面：`(b, num_heads, num_tokens, head_dim)`。
# - `attn_scores = queries @ keys.transpose(2, 3)`：一次批量乘法得到每个头的分数，形状为 `(b, num_heads, num_tokens, num_tokens)`。
# - 掩码（mask）、缩放后的 softmax 和 dropout 与 `CausalAttention` 中的那几行相同，只是同时作用于所有的头。
# - `(attn_weights @ values).transpose(1, 2)` 把词元维度放回前面；`.contiguous().view(b, num_tokens, self.d_out)` 把各个头重新拼接起来，作用与包装器中的 `torch.cat` 相同。
# - `self.out_proj(context_vec)` 把各个头的输出混合起来，这是包装器所没有的一层。
#
# 使用书中的种子和尺寸（`d_out=2`，拆分为两个大小为 1 的头）：

# %%
torch.manual_seed(123)
batch_size, context_length, d_in = batch.shape
d_out = 2
mha = MultiHeadAttention(d_in, d_out, context_length, dropout=0.0, num_heads=2)

context_vecs = mha(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
# Out:
# tensor([[[0.3190, 0.4858],
#          [0.2943, 0.3897],
#          [0.2856, 0.3593],
#          [0.2693, 0.3873],
#          [0.2639, 0.3928],
#          [0.2575, 0.4028]],
#
#         [[0.3190, 0.4858],
#          [0.2943, 0.3897],
#          [0.2856, 0.3593],
#          [0.2693, 0.3873],
#          [0.2639, 0.3928],
#          [0.2575, 0.4028]]], grad_fn=<ViewBackward0>)
# context_vecs.shape: torch.Size([2, 6, 2])

# %% [markdown]
# 现在，无论头的数量是多少，输出维度都是 `d_out` 本身。每个头的注意力模式可以从拆分后的投影中重新计算出来：

# %% caption="图 6. MultiHeadAttention 每个头的因果注意力权重。" alt="两张并排的热力图，MultiHeadAttention 的每个头一张，各为一个 6×6 的下三角因果注意力权重矩阵。每个头只有一个查询特征和一个键特征，因此两个头的权重呈现出彼此不同的模式。"
with torch.no_grad():
    split_shape = (6, mha.num_heads, mha.head_dim)
    q = mha.W_query(inputs).view(split_shape).transpose(0, 1)  # (num_heads, 6, head_dim)
    k = mha.W_key(inputs).view(split_shape).transpose(0, 1)
    v = mha.W_value(inputs).view(split_shape).transpose(0, 1)
    _, mha_weights = scaled_dot_product_attention(q, k, v, causal=True)  # (num_heads, 6, 6)
show_attention(
    mha_weights,
    tokens,
    caption="Figure 6. Causal attention weights of each head of MultiHeadAttention.",
    alt=(
        "Two heatmaps side by side, one per head of MultiHeadAttention, each a 6 by 6 "
        "lower-triangular matrix of causal attention weights. Each head has only one "
        "query and key feature, so its weights follow a different pattern from the other."
    ),
)
# Out:
# AttentionFigure('Figure 6. Causal attention weights of each head of MultiHeadAttention.')

# %% [markdown]
# ### GPT-2 规模下的多头注意力
#
# 最小的 GPT-2 模型使用 768 维的嵌入（embedding）、12 个头和 1,024 个词元的上下文。于是它的多头注意力有 $3 \times 768^2$ 个投影权重，外加一个带偏置的 $768 \times 768$ 输出投影：

# %%
gpt2_mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters, head_dim = {gpt2_mha.head_dim}")
print(f"check: {3 * 768 * 768 + 768 * 768 + 768:,}")
# Out:
# 2,360,064 parameters, head_dim = 64
# check: 2,360,064

# %% [markdown]
# 也就是说，一个注意力模块就有 2,360,064 个参数；GPT-2 small 有 12 个这样的模块，每个 Transformer 块一个。[小结](06-summary.md)把整章内容浓缩在了一页之中。
