# %% [markdown] english="9361a7c26a87"
# # Multi-head attention
#
# Mục 3.6 của sách: mở rộng attention một đầu (single-head) thành multi-head attention. Một module
# causal attention học một cách liên hệ các token với nhau. **Multi-head attention** (attention
# nhiều đầu) chạy song song nhiều module như vậy, gọi là các *head* (đầu), mỗi head có trọng số
# riêng, để mỗi head có thể học một kiểu quan hệ khác nhau (một đại từ chỉ đến từ nào, động từ
# nào đi với chủ ngữ nào, ...). Đầu ra của chúng được ghép lại thành một vector cho mỗi token.

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
# ## 3.6.1 Xếp chồng nhiều tầng attention một đầu
#
# Phiên bản bám sát định nghĩa nhất giữ một danh sách các module `CausalAttention` và nối
# (concatenate) đầu ra của chúng theo chiều cuối cùng:
#
# $$
# \operatorname{MultiHead}(X) = \left[\operatorname{head}_1(X) \,\|\, \operatorname{head}_2(X)
# \,\|\, \cdots \,\|\, \operatorname{head}_h(X)\right]
# $$
#
# Đó chính là [`MultiHeadAttentionWrapper`][attention_mechanisms.multihead.MultiHeadAttentionWrapper],
# đúng như bản phát hành trong gói (package) (ô này định nghĩa lớp ngay tại đây, nên bạn có thể sửa
# nó rồi chạy tiếp):

# %% include="attention_mechanisms.multihead.MultiHeadAttentionWrapper"

# %% [markdown]
# `__init__` tạo `num_heads` module `CausalAttention` độc lập, mỗi module có các phép chiếu riêng,
# và giữ chúng trong một `nn.ModuleList` để tham số của chúng thuộc về wrapper. `forward` lần lượt
# chạy từng module trên cùng một `x` và ghép đầu ra của chúng bằng `torch.cat(..., dim=-1)`. Với
# hai head, mỗi head có `d_out=2`, mỗi token nhận được $2 \times 2 = 4$ đặc trưng đầu ra:

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
# Hai cột đầu đến từ head thứ nhất, hai cột sau đến từ head thứ hai. Cả hai câu trong batch (lô)
# giống hệt nhau, nên hai nửa của đầu ra cũng giống nhau.
#
# Mỗi head có một mẫu attention riêng. Các module không trả về trọng số, nhưng các phép chiếu của
# từng head vẫn còn đó để ta tính lại chúng:

# %% caption="Hình 5. Trọng số causal attention của hai head trong MultiHeadAttentionWrapper." alt="Hai bản đồ nhiệt đặt cạnh nhau, mỗi head một bản đồ, mỗi bản đồ là một ma trận tam giác dưới kích thước 6 nhân 6 gồm các trọng số causal attention trên các token Your, journey, starts, with, one, step. Hai head, vốn có các trọng số ngẫu nhiên khác nhau, phân bổ attention lên các token đứng trước theo những cách khác nhau."
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
# ### Chọn kích thước đầu ra
#
# Kích thước đầu ra của wrapper là `d_out * num_heads`. Để có các vector ngữ cảnh (context
# vectors) 2 chiều từ hai head, hãy cho mỗi head `d_out=1` (đây cũng là Bài tập 3.2 của sách):

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
# ## 3.6.2 Cài đặt multi-head attention bằng cách chia trọng số
#
# Wrapper chạy các head của nó lần lượt từng cái một, mỗi head với ba tích ma trận nhỏ.
# [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention] tính tất cả các head
# cùng lúc:
#
# 1. Với mỗi vai trò, một `nn.Linear(d_in, d_out)` chiếu các query (hoặc key, value) của **tất
#    cả** các head trong một tích duy nhất.
# 2. Chiều cuối cùng, `d_out`, được **chia** thành `num_heads` phần, mỗi phần
#    `head_dim = d_out // num_heads`, mỗi head một phần, bằng `.view`.
# 3. `.transpose(1, 2)` đưa chiều head lên trước chiều token, nên các tensor có shape
#    `(b, num_heads, num_tokens, head_dim)`.
# 4. Một tích ma trận theo batch tính attention của mọi head.
# 5. Các head được đặt lại cạnh nhau (`.transpose`, `.contiguous`, `.view`) và một phép chiếu đầu
#    ra `out_proj` trộn chúng lại.
#
# ### Lần theo các phép đổi shape trên một tensor nhỏ xíu
#
# Lấy một câu (`b = 1`) gồm ba token, với `d_out = 4` được chia thành hai head kích thước 2. Các
# số từ 0 đến 11 giúp ta dễ theo dõi từng giá trị đi đến đâu:

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
# `view` không bao giờ di chuyển dữ liệu: nó diễn giải lại cùng một vùng bộ nhớ với một shape mới.
# `transpose` cũng không di chuyển dữ liệu; nó chỉ hoán đổi hai *stride* (bước nhảy), nên tensor
# không còn được lưu theo từng hàng nữa:

# %%
print("contiguous after view:     ", split.is_contiguous(), split.stride())
print("contiguous after transpose:", per_head.is_contiguous(), per_head.stride())
# Out:
# contiguous after view:      True (12, 4, 2, 1)
# contiguous after transpose: False (12, 2, 4, 1)

# %% [markdown]
# Để ghép các head lại, ta chuyển vị ngược lại rồi làm phẳng hai chiều cuối. Vì tensor đã chuyển
# vị không được lưu theo từng hàng, `view` cần gọi `.contiguous()` trước, hàm này sao chép dữ liệu
# sang thứ tự mới (trang [Lỗi thường gặp](pitfalls.py) cho thấy lỗi bạn sẽ gặp nếu thiếu nó):

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
# ### Nhân ma trận theo batch
#
# `@` trên các tensor có hơn hai chiều sẽ nhân theo **hai chiều cuối cùng** và coi tất cả các
# chiều còn lại là batch. Tensor này có shape
# `(b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4)`:

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
# Đó là một tích $3 \times 3$ cho mỗi head, được tính trong một lần gọi. Tính lần lượt từng head
# cho ra cùng những con số đó:

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
# ### Lớp hoàn chỉnh
#
# Ghép tất cả lại, ta được
# [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention] của gói, được trình
# bày và định nghĩa ở đây đúng như bản phát hành:

# %% include="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# Từng dòng một, đối chiếu với các bước vừa lần theo ở trên:
#
# - `__init__` kiểm tra các kích thước, với `head_dim = d_out // num_heads` (`check_heads`
#   từ chối một `d_out` không chia hết), và tạo `W_query`, `W_key`, `W_value`, rồi đến
#   `out_proj`, `dropout` và buffer (bộ đệm) `mask`. Chính thứ tự tạo này làm cho
#   `torch.manual_seed(123)` cho ra đúng các con số của sách.
# - `forward` coi một chuỗi đơn lẻ là một batch gồm một chuỗi, rồi đọc `b, num_tokens`.
# - Ba phép chiếu cho ra `(b, num_tokens, d_out)`; `.view(b, num_tokens,
#   num_heads, head_dim)` chia chiều cuối thành các head, và `.transpose(1, 2)` đưa các head lên
#   trước: `(b, num_heads, num_tokens, head_dim)`.
# - `attn_scores = queries @ keys.transpose(2, 3)`: một tích theo batch cho ra điểm chú ý
#   (attention scores) của mọi head, `(b, num_heads, num_tokens, num_tokens)`.
# - Mask (mặt nạ), softmax có chia tỉ lệ và dropout chính là các dòng của `CausalAttention`, áp
#   dụng cho mọi head cùng lúc.
# - `(attn_weights @ values).transpose(1, 2)` đưa các token trở lại phía trước;
#   `.contiguous().view(b, num_tokens, self.d_out)` ghép các head lại, giống như `torch.cat` của
#   wrapper đã làm.
# - `self.out_proj(context_vec)` trộn đầu ra của các head, một tầng mà wrapper không có.
#
# Với seed và các kích thước của sách (`d_out=2` chia cho hai head, mỗi head kích thước 1):

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
# Giờ đây kích thước đầu ra chính là `d_out`, bất kể số head là bao nhiêu. Mẫu attention của từng
# head có thể được tính lại từ các phép chiếu đã chia:

# %% caption="Hình 6. Trọng số causal attention của từng head trong MultiHeadAttention." alt="Hai bản đồ nhiệt đặt cạnh nhau, mỗi bản đồ cho một head của MultiHeadAttention, mỗi bản đồ là một ma trận tam giác dưới kích thước 6 nhân 6 gồm các trọng số causal attention. Mỗi head chỉ có một đặc trưng query và một đặc trưng key, nên trọng số của nó theo một mẫu khác với head kia."
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
# ### Ở kích thước của GPT-2
#
# Mô hình GPT-2 nhỏ nhất dùng embedding (vector nhúng) 768 chiều, 12 head và ngữ cảnh 1024 token.
# Khi đó multi-head attention của nó có $3 \times 768^2$ trọng số chiếu, cộng với một phép chiếu
# đầu ra $768 \times 768$ có bias:

# %%
gpt2_mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters, head_dim = {gpt2_mha.head_dim}")
print(f"check: {3 * 768 * 768 + 768 * 768 + 768:,}")
# Out:
# 2,360,064 parameters, head_dim = 64
# check: 2,360,064

# %% [markdown]
# Tức là 2,360,064 tham số trong một module attention; GPT-2 small có 12 module như vậy, mỗi
# transformer block một module. Trang [tóm tắt](06-summary.md) gói gọn cả chương trong một trang.
