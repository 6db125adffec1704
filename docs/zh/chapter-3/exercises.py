# %% [markdown] english="385dd517340f"
# # 练习
#
# 第 3 章的三道练习。请先自己尝试每一道，再展开参考答案；下面的每个答案都在构建本页时执行过。

# %%
import torch

from attention_mechanisms import (
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
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
# ## 练习 3.1：比较 SelfAttention_v1 和 SelfAttention_v2
#
# `SelfAttention_v2` 中的 `nn.Linear` 使用的权重初始化方式与 `SelfAttention_v1` 中的 `torch.rand` 不同，所以对于相同的输入，两者打印出的输出不同。请证明它们仍然是同一个函数：把一个 `SelfAttention_v2` 的权重交给一个 `SelfAttention_v1`，然后比较两者的输出。
#
# *提示*：`nn.Linear` 以转置的形式存储它的权重矩阵。

# %% tags=["solution"]
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in=3, d_out=2)
sa_v2 = SelfAttention_v2(d_in=3, d_out=2)

with torch.no_grad():
    # nn.Linear keeps a (d_out, d_in) weight and computes x @ weight.T
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)

print(sa_v1(inputs))
print(sa_v2(inputs))
print("same outputs:", torch.allclose(sa_v1(inputs), sa_v2(inputs)))
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
# same outputs: True

# %% [markdown]
# ## 练习 3.2：返回二维嵌入向量
#
# 修改 `MultiHeadAttentionWrapper(..., num_heads=2)` 的参数，使输出的上下文向量（context vector）是 2 维而不是 4 维，同时保持 `num_heads=2`。
#
# *提示*：不需要修改这个类。

# %% tags=["solution"]
# The output size is d_out * num_heads, so two heads of size 1 give 2 features.
torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in=3, d_out=1, context_length=6, dropout=0.0, num_heads=2)
context_vecs = mha(batch)
print(context_vecs.shape)
# Out:
# torch.Size([2, 6, 2])

# %% [markdown]
# ## 练习 3.3：初始化 GPT-2 规模的注意力模块
#
# 使用 `MultiHeadAttention` 创建一个与最小的 GPT-2 模型尺寸相同的模块：12 个头，输入和输出嵌入（embedding）均为 768 维，上下文长度为 1,024 个词元（token）。它有多少个参数？

# %% tags=["solution"]
gpt2_mha = MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters")

x = torch.randn(1, 1024, 768)  # one full-length sequence
print(gpt2_mha(x).shape)
# Out:
# 2,360,064 parameters
# torch.Size([1, 1024, 768])

# %% [markdown] tags=["solution"]
# 三个投影各有 $768 \times 768$ 个权重，且没有偏置（`qkv_bias=False`），而 `out_proj` 有 $768 \times 768$ 个权重外加 768 个偏置：$4 \times 768^2 + 768 = 2{,}360{,}064$。`mask` 缓冲区（buffer，$1024 \times 1024$）不是参数。GPT-2 本身使用 `qkv_bias=True`，这会再增加 $3 \times 768$ 个参数。
