# %% [markdown] english="385dd517340f"
# # Bài tập
#
# Ba bài tập của chương 3. Hãy tự làm thử từng bài trước khi mở lời giải; mọi lời giải bên dưới
# đều đã được chạy khi xây dựng trang này.

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
# ## Bài tập 3.1: So sánh SelfAttention_v1 và SelfAttention_v2
#
# `nn.Linear` trong `SelfAttention_v2` dùng cách khởi tạo trọng số khác với `torch.rand` của
# `SelfAttention_v1`, nên hai lớp in ra các đầu ra khác nhau cho cùng một đầu vào. Hãy chứng tỏ
# rằng dù vậy chúng vẫn là cùng một hàm: gán cho một `SelfAttention_v1` các trọng số của một
# `SelfAttention_v2` rồi so sánh đầu ra.
#
# *Gợi ý:* `nn.Linear` lưu ma trận trọng số của nó ở dạng chuyển vị.

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
# ## Bài tập 3.2: Trả về các vector embedding hai chiều
#
# Hãy thay đổi các đối số của `MultiHeadAttentionWrapper(..., num_heads=2)` sao cho các vector ngữ
# cảnh (context vectors) ở đầu ra có 2 chiều thay vì 4 chiều, vẫn giữ nguyên `num_heads=2`.
#
# *Gợi ý:* bạn không cần sửa lớp.

# %% tags=["solution"]
# The output size is d_out * num_heads, so two heads of size 1 give 2 features.
torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in=3, d_out=1, context_length=6, dropout=0.0, num_heads=2)
context_vecs = mha(batch)
print(context_vecs.shape)
# Out:
# torch.Size([2, 6, 2])

# %% [markdown]
# ## Bài tập 3.3: Khởi tạo các module attention có kích thước như GPT-2
#
# Dùng `MultiHeadAttention`, hãy tạo một module với các kích thước của mô hình GPT-2 nhỏ nhất:
# 12 head (đầu), embedding (vector nhúng) đầu vào và đầu ra 768 chiều, và độ dài ngữ cảnh (context
# length) 1024 token. Module đó có bao nhiêu tham số?

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
# Ba phép chiếu, mỗi phép có $768 \times 768$ trọng số và không có bias (`qkv_bias=False`), còn
# `out_proj` có $768 \times 768$ trọng số cộng thêm 768 bias:
# $4 \times 768^2 + 768 = 2{,}360{,}064$. Buffer (bộ đệm) `mask` ($1024 \times 1024$) không phải
# là tham số. Bản thân GPT-2 dùng `qkv_bias=True`, tức là có thêm $3 \times 768$ tham số nữa.
