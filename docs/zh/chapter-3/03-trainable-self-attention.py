# %% [markdown] english="1d50d93593ef"
# # 带可训练权重的自注意力
#
# 书中 3.4 节：GPT 以及大多数其他 Transformer 所使用的**缩放点积注意力**（scaled dot-product attention）。它增加了三个由模型在训练中学习的权重矩阵：$W_q$、$W_k$ 和 $W_v$。
#
# 每个输入 $x^{(i)}$ 都被投影三次：
#
# - 它的**查询**（query）$q^{(i)} = x^{(i)} W_q$：这个词元（token）在寻找什么；
# - 它的**键**（key）$k^{(i)} = x^{(i)} W_k$：这个词元凭什么被别的词元找到；
# - 它的**值**（value）$v^{(i)} = x^{(i)} W_v$：这个词元被关注时向外传递的内容。
#
# 现在，分数比较的是查询和键，$\omega_{ij} = q^{(i)} \cdot k^{(j)}$，而上下文向量（context vector）混合的是值，而不再是原始输入。

# %%
import torch

# The class cells below, which the build fills in from the package, use the names
# marked noqa: ruff cannot see those uses in this file.
from torch import Tensor, nn  # noqa: F401

from attention_mechanisms import SelfAttention_v1, SelfAttention_v2
from attention_mechanisms.checks import check_size, check_tokens  # noqa: F401
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
# ## 3.4.1 逐步计算注意力权重
#
# 我们仍然跟踪第二个词元“journey”。输入维度是 3；书中把输出维度选为 2，好让数字保持简短（GPT 模型的输入和输出维度相同）。

# %%
x_2 = inputs[1]
d_in = inputs.shape[1]  # 3
d_out = 2

torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)

# %% [markdown]
# `requires_grad=False` 只是为了让打印结果简短一些；正在训练的模型会保持它开启。“journey”的查询、键和值是同一个向量的三个投影：

# %%
query_2 = x_2 @ W_query
key_2 = x_2 @ W_key
value_2 = x_2 @ W_value
print("query:", query_2)
print("key:  ", key_2)
print("value:", value_2)
# Out:
# query: tensor([0.4306, 1.4551])
# key:   tensor([0.4433, 1.1419])
# value: tensor([0.3951, 1.0037])

# %% [markdown]
# 要给“journey”与每个词元打分，我们需要每个词元的键，稍后还需要每个词元的值。各用一次矩阵乘法，就能投影全部六个词元：

# %%
keys = inputs @ W_key  # (6, 2)
values = inputs @ W_value  # (6, 2)
print("keys.shape:  ", keys.shape)
print("values.shape:", values.shape)
# Out:
# keys.shape:   torch.Size([6, 2])
# values.shape: torch.Size([6, 2])

# %% [markdown]
# “journey”与自身的分数，是它的查询与它自己的键的点积，$\omega_{22} = q^{(2)} \cdot k^{(2)}$：

# %%
attn_score_22 = query_2.dot(keys[1])
print(attn_score_22)
# Out:
# tensor(1.8524)

# %% [markdown]
# 而查询 2 的全部六个分数，只需一次向量与矩阵的乘积，$\omega_2 = q^{(2)} K^\top$：

# %%
attn_scores_2 = query_2 @ keys.T
print(attn_scores_2)
# Out:
# tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])

# %% [markdown]
# ### 为什么要缩放分数
#
# 在 softmax 之前，分数要除以 $\sqrt{d_k}$，即键维度的平方根：
#
# $$
# \alpha_{2j} = \operatorname{softmax}\left(\frac{\omega_2}{\sqrt{d_k}}\right)_j
# $$
#
# 两个 $d_k$ 维向量的点积是 $d_k$ 项之和，因此它的离散程度随 $d_k$ 增大而增大。较大的分数会把 softmax 推向独热（one-hot）向量，在那里它的梯度几乎为零，训练就会停滞。除以 $\sqrt{d_k}$ 能让分数的离散程度大致与维度无关，这也是这种方法名称的由来：*缩放*点积注意力。

# %%
d_k = keys.shape[-1]
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
print(attn_weights_2)
# Out:
# tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])

# %% [markdown]
# 最后，“journey”的上下文向量是值的加权和，$z^{(2)} = \sum_j \alpha_{2j} v^{(j)}$：

# %%
context_vec_2 = attn_weights_2 @ values
print(context_vec_2)
# Out:
# tensor([0.3061, 0.8210])

# %% [markdown]
# ## 3.4.2 实现一个紧凑的自注意力 Python 类
#
# 把上面的步骤同时应用到每个词元上，就得到一个类。这就是包中原样发布的 [`SelfAttention_v1`][attention_mechanisms.self_attention.SelfAttention_v1]；下面的单元格会在本笔记本中定义它，所以你可以修改它，再重新运行它后面的单元格。它计算的是
#
# $$
# Z = \operatorname{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,
# \qquad Q = X W_q,\; K = X W_k,\; V = X W_v
# $$

# %% include="attention_mechanisms.self_attention.SelfAttention_v1"

# %% [markdown]
# 逐行解读：
#
# - `__init__` 先检查两个尺寸都是正整数（`check_size`），然后依次创建 `W_query`、`W_key` 和 `W_value`，它们都是 `nn.Parameter(torch.rand(d_in, d_out))`：与 3.4.1 中的三次随机抽取相同，因此相同的种子会得到相同的矩阵。`nn.Parameter` 会把每个矩阵注册到模块中，这样 `parameters()` 和 `state_dict()` 都能看到它。
# - `forward` 先检查 `x`（`check_tokens`）：它应是浮点类型的 `(T, d_in)`，或者一个批次 `(b, T, d_in)`。
# - `keys = x @ self.W_key`，查询和值也同样计算：每个词元占一行，是 `x_2 @ W_key` 的矩阵形式。
# - `attn_scores = queries @ keys.mT`：一次算出所有 $\omega_{ij}$。`.mT` 转置最后两个维度，对单个序列而言，就是书中的 `keys.T`。
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`：用 $\sqrt{d_k}$ 缩放，并在键的维度上归一化，每一行之和为 1。
# - `context_vec = attn_weights @ values`：第 $i$ 行就是 $z^{(i)}$。
#
# 使用与 3.4.1 相同的种子，它的第二行正是我们手工算出的上下文向量：

# %%
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in, d_out)
print(sa_v1(inputs))
# Out:
# tensor([[0.2996, 0.8053],
#         [0.3061, 0.8210],
#         [0.3058, 0.8203],
#         [0.2948, 0.7939],
#         [0.2927, 0.7891],
#         [0.2990, 0.8040]], grad_fn=<MmBackward0>)

# %% [markdown]
# [`SelfAttention_v2`][attention_mechanisms.self_attention.SelfAttention_v2] 用 `nn.Linear` 层取代手工创建的矩阵；除非设置 `qkv_bias=True`，否则这些层不带偏置：

# %% include="attention_mechanisms.self_attention.SelfAttention_v2"

# %% [markdown]
# 只有两处变化。在 `__init__` 中，每个投影都是一个 `nn.Linear(d_in, d_out)`，它计算的是同样的矩阵乘积，但初始化方式比 `torch.rand` 更好，有助于训练。在 `forward` 中，用 `self.W_key(x)` 调用该层，取代 `x @ self.W_key`。其余部分，即分数、缩放、softmax 和加权求和，逐行完全相同。它的权重是另一组随机数，所以输出也不同：

# %%
torch.manual_seed(789)
sa_v2 = SelfAttention_v2(d_in, d_out)
print(sa_v2(inputs))
# Out:
# tensor([[-0.0739,  0.0713],
#         [-0.0748,  0.0703],
#         [-0.0749,  0.0702],
#         [-0.0760,  0.0685],
#         [-0.0763,  0.0679],
#         [-0.0754,  0.0693]], grad_fn=<MmBackward0>)

# %% [markdown]
# 下面是这一输出背后的注意力权重（attention weights），一行对应一个查询：

# %% caption="图 2. torch.manual_seed(789) 之后 SelfAttention_v2 的注意力权重。" alt="SelfAttention_v2 在未经训练的随机权重下的 6×6 注意力权重热力图。所有权重都介于 0.15 和 0.21 之间，因此每个词元对全部六个词元的关注几乎相同；Your 这一列比其他列略深。"
with torch.no_grad():
    queries, keys = sa_v2.W_query(inputs), sa_v2.W_key(inputs)
    weights_v2 = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
show_attention(
    weights_v2,
    tokens,
    caption="Figure 2. Attention weights of SelfAttention_v2 after torch.manual_seed(789).",
    alt=(
        "Heatmap of the 6 by 6 attention weights of SelfAttention_v2 with untrained random "
        "weights. All weights lie between 0.15 and 0.21, so every token attends to all six "
        "tokens almost equally; the column for Your is slightly darker than the others."
    ),
)
# Out:
# AttentionFigure('Figure 2. Attention weights of SelfAttention_v2 after torch.manual_seed(789).')

# %% [markdown]
# 未经训练的权重给出的注意力几乎是均匀的：模型还没有学到哪些词元对哪些词元重要。
#
# ### 把 v2 的权重复制到 v1
#
# 这两个类计算的是同一个函数。`nn.Linear(d_in, d_out)` 把权重存储为一个 `(d_out, d_in)` 矩阵，并计算 `x @ weight.T`，因此把 v2 **转置后**的权重复制到 v1 中，两者的输出就必然相等：

# %%
print(nn.Linear(3, 2, bias=False).weight.shape)  # (d_out, d_in): stored transposed
# Out:
# torch.Size([2, 3])

# %%
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in, d_out)
sa_v2 = SelfAttention_v2(d_in, d_out)

with torch.no_grad():
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)

print(sa_v1(inputs))
print(sa_v2(inputs))
print("equal:", torch.allclose(sa_v1(inputs), sa_v2(inputs)))
# Out:
# tensor([[0.5085, 0.3508],
#         [0.5084, 0.3508],
#         [0.5084, 0.3506],
#         [0.5074, 0.3471],
#         [0.5076, 0.3446],
#         [0.5077, 0.3493]], grad_fn=<MmBackward0>)
# tensor([[0.5085, 0.3508],
#         [0.5084, 0.3508],
#         [0.5084, 0.3506],
#         [0.5074, 0.3471],
#         [0.5076, 0.3446],
#         [0.5077, 0.3493]], grad_fn=<MmBackward0>)
# equal: True

# %% [markdown]
# 这两个类都允许每个词元查看所有其他词元，包括排在它后面的词元。逐个词元生成文本的模型不能允许这样做；[下一页](04-causal-attention.py)会把未来遮住。
