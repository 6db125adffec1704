# %% [markdown] english="9d543dbd2367"
# # 简化的自注意力
#
# 书中 3.3 节：用自注意力关注输入的不同部分。先不使用任何可训练权重，这样每个数字都可以手工验算。
#
# 自注意力（self-attention）的目标是为每个词元（token）$x^{(i)}$ 计算一个**上下文向量**（context vector）$z^{(i)}$：它是所有输入向量的混合，按每个输入与词元 $i$ 的相关程度加权。我们分三步来构建它：
#
# 1. **注意力分数**（attention scores）$\omega_{ij}$：词元 $j$ 与词元 $i$ 有多相似；
# 2. **注意力权重**（attention weights）$\alpha_{ij}$：经过归一化、使每一行之和为 1 的分数；
# 3. **上下文向量** $z^{(i)} = \sum_j \alpha_{ij} x^{(j)}$。

# %%
import torch

from attention_mechanisms import (
    attention_scores,
    attention_scores_loop,
    attention_weights,
    context_vector,
    context_vectors,
    query_scores_loop,
    softmax_stable,
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

# %% [markdown]
# ## 3.3.1 一个不含可训练权重的简单自注意力机制
#
# 以第二个词元“journey”作为**查询**（query）。它与每个词元 $x^{(j)}$ 的注意力分数是点积 $\omega_{2j} = x^{(2)} \cdot x^{(j)}$，即逐元素乘积之和。两个向量的方向越接近，点积就越大，因此点积可以用来衡量相似度。

# %%
query = inputs[1]  # "journey", x^(2)

attn_scores_2 = torch.empty(inputs.shape[0])
for j, x_j in enumerate(inputs):
    attn_scores_2[j] = torch.dot(query, x_j)  # omega_2j
print(attn_scores_2)
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# 包中的 [`query_scores_loop`][attention_mechanisms.simple.query_scores_loop] 就是同样的循环，给出的数字也相同：

# %%
print(query_scores_loop(query, inputs))
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# “journey”与它自身（1.4950）以及与“starts”（1.4754）的分数最高，“starts”的嵌入（embedding）与它几乎一样。
#
# 这些分数加起来并不等于某个特定的值。要把它们变成权重，最先想到的办法是除以它们的总和：

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
print("Attention weights:", attn_weights_2_tmp)
print("Sum:", attn_weights_2_tmp.sum())
# Out:
# Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
# Sum: tensor(1.0000)

# %% [markdown]
# 这样得到的权重之和为 1，但负的分数会变成负的权重。标准的做法是改用 **softmax** 函数：
#
# $$
# \alpha_{2j} = \operatorname{softmax}(\omega_2)_j = \frac{e^{\omega_{2j}}}{\sum_k e^{\omega_{2k}}}
# $$
#
# 每个权重都是正数，它们的和为 1，而且分数越大，得到的权重会不成比例地更大。完全照着公式写，只需要一行代码：


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


attn_weights_2_naive = softmax_naive(attn_scores_2)
print("Attention weights:", attn_weights_2_naive)
print("Sum:", attn_weights_2_naive.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# ### 朴素 softmax 在哪里失效
#
# $e^x$ 增长得非常快。float32 能表示的最大数约为 $3.4 \times 10^{38}$，而 $e^{89}$ 就已经比它大了。这时分子和分母都是无穷大，而 $\infty / \infty$ 是“非数”（not a number）：

# %%
big_scores = torch.tensor([100.0, 1.0, 0.0])
print("naive: ", softmax_naive(big_scores))
print("stable:", softmax_stable(big_scores))
print("torch: ", torch.softmax(big_scores, dim=0))
# Out:
# naive:  tensor([nan, 0., 0.])
# stable: tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])
# torch:  tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])

# %% [markdown]
# 稳定版本在求指数之前先减去最大的分数 $m$。因子 $e^{-m}$ 在分子和分母之间相互抵消，所以结果不变，但现在每个指数都不超过 0：
#
# $$
# \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k
# $$
#
# `torch.softmax` 在内部就是这样做的，[`softmax_stable`][attention_mechanisms.simple.softmax_stable] 以及包中的其他所有代码也是如此。在你自己的代码中，请使用 `torch.softmax`：

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
print("Attention weights:", attn_weights_2)
print("Sum:", attn_weights_2.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# 最后一步把每个输入向量乘以它的权重，再全部相加：$z^{(2)} = \sum_j \alpha_{2j} x^{(j)}$。

# %%
context_vec_2 = torch.zeros(query.shape)
for j, x_j in enumerate(inputs):
    context_vec_2 += attn_weights_2[j] * x_j
print(context_vec_2)
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# [`context_vector`][attention_mechanisms.simple.context_vector] 把这个循环封装了起来：

# %%
print(context_vector(attn_weights_2, inputs))
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# ## 3.3.2 为所有输入词元计算注意力权重
#
# 现在让每个词元轮流充当查询。用两层循环，分数构成一个 $6 \times 6$ 矩阵，其第 $i$ 行是查询 $i$ 的分数：

# %%
attn_scores = torch.empty(6, 6)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores[i, j] = torch.dot(x_i, x_j)
print(attn_scores)
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])

# %% [markdown]
# 元素 $(i, j)$ 是第 $i$ 行与第 $j$ 行的点积，这恰好就是矩阵乘积 $X X^\top$ 所计算的内容，只需一次调用，而且快得多：

# %%
attn_scores = inputs @ inputs.T
print(attn_scores)
print(torch.allclose(attn_scores, attention_scores_loop(inputs)))
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])
# True

# %% [markdown]
# 沿每一行（`dim=-1`，即最后一个维度）做 softmax，把分数变成权重；每一行之和都为 1：

# %%
attn_weights = torch.softmax(attn_scores, dim=-1)
print(attn_weights)
print("row sums:", attn_weights.sum(dim=-1))
# Out:
# tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
#         [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
#         [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
#         [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
#         [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
#         [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
# row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])

# %% [markdown]
# 下图展示的是同一个矩阵。每一行是一个查询；颜色越深的格子，表示该查询从对应词元那里汲取的信息越多。

# %% caption="图 1. 简化自注意力的注意力权重（不含可训练权重）。" alt="6×6 注意力权重矩阵的热力图，行和列是词元 Your、journey、starts、with、one、step。每一行之和为 1。权重分布得相当均匀，介于 0.10 和 0.24 之间；journey 和 starts 对彼此以及对自身的关注最多，各约 0.23。"
show_attention(
    attn_weights,
    tokens,
    caption="Figure 1. Attention weights of simplified self-attention (no trainable weights).",
    alt=(
        "Heatmap of a 6 by 6 matrix of attention weights between the tokens Your, journey, "
        "starts, with, one, step. Every row sums to 1. Weights are spread fairly evenly, "
        "between 0.10 and 0.24; journey and starts attend most to each other and to "
        "themselves, about 0.23 each."
    ),
)
# Out:
# AttentionFigure('Figure 1. Attention weights of simplified self-attention (no trainable weights).')

# %% [markdown]
# 最后，一次性算出所有上下文向量：$A X$ 的第 $i$ 行就是 $\sum_j \alpha_{ij} x^{(j)}$，也就是上面针对查询 $i$ 的那个循环。

# %%
all_context_vecs = attn_weights @ inputs
print(all_context_vecs)
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# 第二行 $z^{(2)}$ 正是我们在 3.3.1 中用循环算出的上下文向量。无论逐步调用还是一次调用，包给出的都是同一个矩阵：

# %%
print(context_vectors(attention_weights(attention_scores(inputs)), inputs))
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# 这里没有任何东西是学出来的：权重直接来自嵌入。下一页会给模型三个可训练的矩阵，让它能够学习应该关注*什么*。
