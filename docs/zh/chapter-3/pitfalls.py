# %% [markdown] english="87a3e569bc77"
# # 常见陷阱
#
# 读者照着第 3 章敲代码时真正会犯的错误，每一个都附上它实际产生的报错（本页在构建站点时执行过）。有些错误根本不会抛出异常，而是悄无声息地算出别的东西；这类错误才最危险。

# %%
import torch
from torch import nn
from torch.nn.functional import scaled_dot_product_attention

from attention_mechanisms import (
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
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
# ## transpose 之后直接 view，没有 contiguous
#
# `MultiHeadAttention` 在拼接各个头（head）时，上下文张量（tensor）刚刚被转置过。`transpose` 只交换步幅（stride），转置后的张量在内存中不再是逐行存储的，即不再连续（contiguous），而 `view` 无法重新解释这样的内存：

# %% tags=["raises-exception"] raises="RuntimeError: view size is not compatible with input tensor's size and stride"
context = torch.randn(2, 3, 6, 4)  # (b, num_heads, num_tokens, head_dim)
context.transpose(1, 2).view(2, 6, 12)

# %% [markdown]
# **修正方法**：`.transpose(1, 2).contiguous().view(2, 6, 12)`，或者 `.reshape(2, 6, 12)`，后者只在必要时才复制数据。

# %%
print(context.transpose(1, 2).contiguous().view(2, 6, 12).shape)
# Out:
# torch.Size([2, 6, 12])

# %% [markdown]
# ## 拆分多头时漏掉 transpose
#
# 拆分多头本身也有一个陷阱。`.view(b, num_heads, num_tokens, head_dim)` 能够运行，得到的形状也和 `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)` 一样，但里面的数不一样。下面的例子中，一条序列有 3 个词元（token），每个词元有 4 个特征，要拆成 2 个头，每个头 2 个特征；`torch.arange` 给特征依次编号，所以词元 $t$ 存放的是 $4t, \dots, 4t + 3$：

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
# `view` 从不移动任何一个数，它只是按新的形状去读同一块内存。内存中的特征是按词元依次存放的：先是词元 0 的全部特征，再是词元 1 的全部特征。view 成 `(b, num_tokens, num_heads, head_dim)`，是把每个词元的特征切成 `num_heads` 段，这正是拆分多头的含义；随后 `transpose(1, 2)` 把头所在的维度移到前面，于是头 0 拿到的是每个词元的前两个特征。view 成 `(b, num_heads, num_tokens, head_dim)`，切出来的却是内存中一段段相邻的 `head_dim` 个数：错误版本的“头 0”中，三行分别是词元 0 的前半段、后半段和词元 1 的前半段。它的行不再对应词元，于是注意力分数（attention scores）比较的是不同词元的片段，因果掩码（causal mask）隐藏的也是错误的片段。
#
# **修正方法**：先拆分最后一个维度，再转置：`.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)`，与书中的写法一致。
#
# ## torch.cat 没有指定 dim=-1
#
# `MultiHeadAttentionWrapper` 用 `torch.cat(..., dim=-1)` 拼接各个头。不写 `dim=-1` 时，`torch.cat` 沿第 0 维，也就是批次（batch）维度拼接。每个头返回 `(b, num_tokens, d_out)` = `(2, 6, 2)`，于是两个头被拼成了一个含四条序列的批次，每个词元仍然只有两个特征：

# %%
torch.manual_seed(123)
heads = [CausalAttention(3, 2, context_length=6, dropout=0.0) for _ in range(2)]
print(torch.cat([head(batch) for head in heads]).shape)  # the bug
# Out:
# torch.Size([4, 6, 2])

# %% [markdown]
# 这一行本身不会出错；要等到后面第一个需要 `2 * d_out = 4` 个特征的层才会报错，那里离真正的原因已经很远了。
#
# **修正方法**：`torch.cat([head(x) for head in self.heads], dim=-1)`，沿特征维度把各个头拼接在一起：

# %%
print(torch.cat([head(batch) for head in heads], dim=-1).shape)
# Out:
# torch.Size([2, 6, 4])

# %% [markdown]
# ## d_out：单个头的维度还是所有头的总维度
#
# 两个多头注意力（multi-head attention）类对 `d_out` 的理解不同。在 `MultiHeadAttentionWrapper` 中，它是**每个**头的维度，各个头的输出拼接起来，所以输出有 `num_heads * d_out` 个特征。在 `MultiHeadAttention` 中，它是**整个**输出的维度，再拆分成若干个 `head_dim = d_out // num_heads` 维的头。因此，同样的参数会得到不同宽度的输出：

# %%
wrapper = MultiHeadAttentionWrapper(3, 2, context_length=6, dropout=0.0, num_heads=2)
mha = MultiHeadAttention(3, 2, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttentionWrapper:", wrapper(batch).shape)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttentionWrapper: torch.Size([2, 6, 4])
# MultiHeadAttention:        torch.Size([2, 6, 2]) head_dim: 1

# %% [markdown]
# **修正方法**：要用 `h` 个头得到 `k` 个输出特征，就给 `MultiHeadAttentionWrapper` 传 `d_out = k / h`，给 `MultiHeadAttention` 传 `d_out = k`。要得到上面包装器的宽度 4，`MultiHeadAttention` 需要 `d_out=4`；这样两者都是两个头，每个头两个特征。（[练习 3.2](exercises.py) 正好反过来：`d_out=1` 让包装器的宽度变成 2。）

# %%
mha = MultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttention:        torch.Size([2, 6, 4]) head_dim: 2

# %% [markdown]
# ## 调用 x.shape(-1)
#
# `shape` 是一个属性（一个 `torch.Size`，也就是一个元组），而不是方法。在计算缩放因子需要最后一个维度的大小时，把它当作方法来调用是一个常见的笔误：

# %% tags=["raises-exception"] raises="TypeError: 'torch.Size' object is not callable"
query = torch.randn(6, 2)
d_k = query.shape(-1)

# %% [markdown]
# **修正方法**：用索引 `query.shape[-1]`，或者调用方法 `query.size(-1)`。

# %%
print(query.shape[-1], query.size(-1))
# Out:
# 2 2

# %% [markdown]
# ## 多余的逗号：self.d_out = d_out,
#
# 末尾的逗号会构造出一个元组。赋值本身会成功，错误要到很久以后才出现，而且出现在一行看起来完全正确的代码里：


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
# **修正方法**：去掉逗号。在 `__init__` 中加一句 `print(type(self.d_out))`，很快就能发现它。
#
# ## tril 还是 triu：掩码标记的是哪些位置？
#
# 本章中有两种约定。书中的缓冲区（buffer）标记的是要**隐藏**的位置（`torch.triu(..., diagonal=1)`，对角线以上为 1）。`torch.tril(...)` 矩阵标记的则是要**保留**的位置。如果在该用隐藏掩码的地方用了保留掩码，什么错误都不会报：模型只是关注了未来，却忽略了过去。

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
# 错误的版本把对角线及其之前的所有位置都隐藏了，于是第一个词元只关注未来，而最后一个词元什么都不剩：一整行 `-inf` 经过 softmax 后会变成 NaN。一个简单的测试就能发现这个问题：因果权重的第一行必须是 $[1, 0, 0, \dots]$，而且改变后面的词元不能改变前面的输出。（PyTorch 自带的 `scaled_dot_product_attention` 接受的是布尔型的**保留**掩码，所以同样的混淆在那里会反过来出现，见下一条；`torch.nn.MultiheadAttention` 接受的则是布尔型的**隐藏**掩码。本包的函数式接口把参数命名为 `hide_mask`，以免被误读。）
#
# ## 把书中的掩码传给 scaled_dot_product_attention
#
# `torch.nn.functional.scaled_dot_product_attention` 把布尔型的 `attn_mask` 理解为“True = 可以关注”。把书中的隐藏掩码传给它，得到的就是上一条中那组错误的权重。用单位矩阵作键（key）和值（value），并设 `scale=1.0`，这个函数返回的就是注意力权重（attention weights）本身，可以直接与上一条的 `right` 和 `wrong` 比较：

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
# 每个词元都只关注它后面的词元，而最后一个词元连一个键也不剩。上一条的 softmax 在这一行给出 NaN，这个函数却返回一行 0，于是最后一个词元的输出是零向量，没有任何迹象表明出了错。
#
# **修正方法**：把掩码取反，`attn_mask=~hide`；或者不传掩码，改用 `is_causal=True`：

# %%
fixed_mask = scaled_dot_product_attention(scores, eye, eye, attn_mask=~hide, scale=1.0)
fixed_causal = scaled_dot_product_attention(scores, eye, eye, is_causal=True, scale=1.0)
print("attn_mask=~hide equals `right`:", torch.allclose(fixed_mask, right))
print("is_causal=True equals `right`: ", torch.allclose(fixed_causal, right))
# Out:
# attn_mask=~hide equals `right`: True
# is_causal=True equals `right`:  True

# %% [markdown]
# ## 把掩码保存为普通属性
#
# 用 `self.mask = ...` 而不是 `self.register_buffer("mask", ...)` 来保存掩码，在 CPU 上可以运行，但模块移到其他设备时，掩码不会跟着走。这里把模块移到 PyTorch 的 `meta` 设备（一种不含数据的设备，在这台只有 CPU 的构建机器上充当 GPU 的替身）；掩码却留在了原处：


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
# 检查点中也缺少这个掩码，而缓冲区会随检查点一起保存：

# %%
print("plain attribute:", list(PlainMask(3, 2, 6).state_dict()))
print("buffer:         ", list(CausalAttention(3, 2, 6, 0.0).state_dict()))
# Out:
# plain attribute: ['W_query.weight', 'W_key.weight']
# buffer:          ['mask', 'W_query.weight', 'W_key.weight', 'W_value.weight']

# %% [markdown]
# ## 朴素 softmax 会溢出
#
# 一旦 $x > 88.7$，$e^x$ 就会超过 float32 能表示的最大数。有了缩放之后，这么大的分数很少见，但确实会出现，这时朴素公式就会返回 NaN：


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
# **修正方法**：使用 `torch.softmax`，它会先减去最大值。
#
# ## 在 softmax 之后才缩放
#
# 分数要在 softmax **之前**除以 $\sqrt{d_k}$。如果在 softmax 之后才去除权重，即 `torch.softmax(attn_scores, dim=-1) / d_k**0.5`，代码照样能运行，但每一行的和不再是 1。下面用书中第 3.4 节固定了随机种子（seed）的权重来演示：

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
# 每一行的和都是 $1 / \sqrt{2} \approx 0.7071$，所以每个上下文向量（context vector）都成了一个被缩小的加权和，而不是加权平均。而且缩放也起不到原本的作用了：缩放是为了在 softmax 之前让分数保持较小，因为分数很大时，softmax 的输出会趋向于只有一个 1，这时梯度非常小（见[第 3.4 节](03-trainable-self-attention.py)）。事后再除弥补不了这一点：把错误的那一行乘回 $\sqrt{2}$，得到的正是未缩放分数的 softmax，它比正确的权重更集中：最大的权重是 0.2507，而不是 0.2264。
#
# **修正方法**：`torch.softmax(attn_scores / d_k**0.5, dim=-1)`，与书中的写法一致。
#
# ## 在 softmax 之前做 dropout
#
# Dropout 应该作用在注意力**权重**上，也就是在 softmax 之后。如果在 softmax 之前作用于分数，被丢弃的分数会变成 0，而分数为 0 并不等于被隐藏：softmax 照样会像对待其他分数一样，给它 $e^0 / \sum_j e^{s_j}$ 的权重。只有 $-\infty$ 才能隐藏一个位置。下面对书中“journey”的分数施加同一个丢弃率（dropout rate）为 $p = 0.5$ 的丢弃模式，一次在 softmax 之前，一次在 softmax 之后。（`nn.Dropout` 会自己随机生成丢弃模式；这里改用一个固定了随机种子的生成器，使本页的数字在任何平台上都相同。）

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
# 在 softmax 之前做 dropout，每个被丢弃的词元仍然会得到权重，权重之和也仍然是 1，所以 dropout 不再切断任何连接，只是把权重推向那些翻了倍的保留项。在 softmax 之后做 dropout，被丢弃的权重恰好为 0，保留下来的权重翻倍，所以权重之和只在平均意义上等于 1，[第 3.5.2 节](04-causal-attention.py)对此有解释。
#
# **修正方法**：`attn_weights = self.dropout(torch.softmax(...))`，放在 softmax 之后。
#
# ## 把 dropout 保留的值除以 p
#
# Dropout 把保留下来的值乘以 $1 / (1 - p)$，这样每个值的期望保持不变。手写的 dropout 如果改成除以 $p$，在书中的 $p = 0.5$ 下看起来没问题，因为这时 $1 / p$ 和 $1 / (1 - p)$ 都等于 2。换成 $p = 0.25$ 就不对了：每个值以 0.75 的概率被保留，然后乘以 4，所以平均而言会变成原来的三倍。把同一行数据复制一百万份，分别做 dropout 后取均值，就能看出来：


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
# `nn.Dropout` 保持了期望：它的均值就是这一行本身。（有一百万份副本时，每个均值的随机误差不到千分之一，远小于打印出来的两位小数。）
#
# **修正方法**：`x * keep / (1 - p)`，或者直接用 `nn.Dropout(p)`。使用与上面相同的丢弃模式：

# %%
keep = torch.rand(copies.shape, generator=torch.Generator().manual_seed(123)) >= 0.25
print("divided by 1 - p:", (copies * keep / (1 - 0.25)).mean(dim=0).round(decimals=2))
# Out:
# divided by 1 - p: tensor([0.2000, 0.3000, 0.5000])

# %% [markdown]
# ## 词元数超过 context_length
#
# 掩码的大小是按 `context_length` 个词元设定的。书中的类用 `[:num_tokens, :num_tokens]` 对它切片；当输入更长时，切出来的部分太小，报错会在掩码操作的内部抛出：


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
# 本包会先检查输入，并说明哪里出了问题、应该怎么做：

# %% tags=["raises-exception"] raises="ValueError: x has 7 tokens, more than context_length=6"
CausalAttention(3, 2, context_length=6, dropout=0.0)(seven_tokens)

# %% [markdown]
# ## 词元数少于 context_length
#
# 词元数少于 `context_length` 是允许的，而让这种输入能正常工作的，正是切片 `[:num_tokens, :num_tokens]`。漏掉这个切片，整个 `(context_length, context_length)` 掩码都会作用到分数上。词元数恰好等于 `context_length` 时，两者大小一致，所以这个类能通过用书中六个词元做的测试；但任何更短的输入都会出错，比如模型生成文本时的一段简短提示词（prompt）。报错信息和上一条一样，只是大小反了过来：上一条是输入相对于掩码太长，这里是掩码相对于输入太大，分数（tensor a）比掩码（tensor b）小。


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
# **修正方法**：把掩码截取到与输入一样大，`self.mask.bool()[:num_tokens, :num_tokens]`，其中 `num_tokens = x.shape[1]`，就像上面书中的类那样：

# %%
print("4 tokens:", BookCausalScores(3, 2, context_length=6)(batch[:, :4]).shape)
# Out:
# 4 tokens: torch.Size([2, 4, 4])
