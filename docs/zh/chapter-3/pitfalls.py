# %% [markdown] english="d81d7367d166"
# # 常见陷阱
#
# 读者照着第 3 章敲代码时真正会犯的错误，每一个都附上它实际产生的报错（本页在构建站点时执行过）。有些错误根本不会抛出异常，而是悄无声息地算出别的东西；这些才是危险的。

# %%
import torch
from torch import nn

from attention_mechanisms import CausalAttention, softmax_stable

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
# `MultiHeadAttention` 在拼接各个头时，上下文张量（tensor）刚刚被转置过。`transpose` 只交换步幅（stride），而 `view` 无法重新解释不再逐行排布的内存：

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
# ## 调用 x.shape(-1)
#
# `shape` 是一个属性（一个 `torch.Size`，也就是一个元组），而不是方法。在计算缩放因子需要最后一个维度的大小时，调用它是一个常见的笔误：

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
# 本章中有两种约定。书中的缓冲区（buffer）标记的是要**隐藏**的位置（`torch.triu(..., diagonal=1)`，对角线以上为 1）。`torch.tril(...)` 矩阵标记的则是要**保留**的位置。如果在该用隐藏掩码（mask）的地方用了保留掩码，什么错误都不会报：模型只是关注了未来，却忽略了过去。

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
# 错误的版本把对角线及其之前的所有位置都隐藏了，于是第一个词元（token）只关注未来，而最后一个词元什么都不剩：一整行 `-inf` 经过 softmax 后会变成 NaN。一个简单的测试就能发现这个问题：因果权重的第一行必须是 $[1, 0, 0, \dots]$，而且改变后面的词元不能改变前面的输出。（PyTorch 自带的 `scaled_dot_product_attention` 接受的是布尔型的**保留**掩码，而 `torch.nn.MultiheadAttention` 接受的是布尔型的**隐藏**掩码；本包的函数式接口把它的参数命名为 `hide_mask`，以免被误读。）

# %% [markdown]
# ## 把掩码保存为普通属性
#
# 用 `self.mask = ...` 而不是 `self.register_buffer("mask", ...)` 来赋值掩码，在 CPU 上可以运行，但模块迁移到其他设备时，掩码不会跟着走。这里把模块迁移到 PyTorch 的 `meta` 设备（一种不含数据的设备，在这台只有 CPU 的构建机器上充当 GPU 的替身）；掩码却被留在了原处：


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
# ## 词元数超过 context_length
#
# 掩码的大小是按 `context_length` 个词元设定的。书中的类用 `[:num_tokens, :num_tokens]` 对它切片；当输入更长时，切出来的部分太小，错误会从掩码步骤的深处抛出：


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
