# %% [markdown] english="fe5bdc3dcb52"
# # Causal attention
#
# Mục 3.5 của sách: che đi các từ ở tương lai. Một mô hình ngôn ngữ được huấn luyện để dự đoán
# từng token tiếp theo từ các token đứng trước nó. Nếu trong lúc huấn luyện, vị trí $t$ có thể chú
# ý đến các vị trí sau $t$, nó chỉ việc chép lại đáp án. **Causal attention** (attention nhân quả,
# còn gọi là masked attention) chỉ cho phép mỗi token chú ý đến chính nó và các token đứng trước
# nó.

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
# ## 3.5.1 Áp dụng mask cho causal attention
#
# Ta dùng lại `SelfAttention_v2` từ trang trước (seed 789) và tính các trọng số chú ý (attention
# weights) của nó như trước:

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
# ### Cách thứ nhất: đặt tương lai về 0, rồi chuẩn hóa lại
#
# Mọi phần tử nằm phía trên đường chéo là một query đang nhìn vào một token đứng sau nó. Một ma
# trận tam giác dưới gồm các số 1 (`torch.tril`) là mask (mặt nạ) đánh dấu những gì được giữ lại:

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
# Các hàng không còn có tổng bằng 1 nữa, nên mỗi hàng được chia cho tổng mới của nó:

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
# ### Cách thứ hai: $-\infty$ trước softmax
#
# Softmax biến $-\infty$ thành đúng 0 ($e^{-\infty} = 0$), và các trọng số còn lại được chuẩn hóa
# với nhau. Vì vậy, đặt **điểm chú ý** (attention scores) của tương lai thành $-\infty$ sẽ cho ra
# trọng số nhân quả chỉ với một lần softmax:
#
# $$
# \alpha_{ij} = \operatorname{softmax}\left(\frac{\omega_i}{\sqrt{d_k}} + m_i\right)_j,
# \qquad m_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}
# $$
#
# Lần này mask đánh dấu những gì cần **che**: các số 1 nằm *phía trên* đường chéo, tạo bởi
# `torch.triu` với `diagonal=1`. (Nhầm lẫn giữa hai quy ước này là một lỗi kinh điển; xem trang
# [Lỗi thường gặp](pitfalls.py).)

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
# Hai cách cho kết quả như nhau, sai khác chỉ do làm tròn. Chuẩn hóa lại sau softmax về mặt toán
# học tương đương với việc loại các phần tử bị che ra khỏi softmax, vì thừa số chung
# $\sum_k e^{\omega_{ik} / \sqrt{d_k}}$, tính cả việc chia tỉ lệ, bị triệt tiêu:

# %%
print("same weights:", torch.allclose(attn_weights, masked_simple_norm))
# Out:
# same weights: True

# %% [markdown]
# Hàm [`causal_mask`][attention_mechanisms.functional.causal_mask] của gói (package) tạo ra cùng
# mask che đó dưới dạng một tensor boolean:

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

# %% caption="Hình 3. Trọng số causal attention: mọi phần tử phía trên đường chéo đều bằng 0." alt="Bản đồ nhiệt của các trọng số causal attention kích thước 6 nhân 6. Tam giác trên toàn là số 0. Your chỉ chú ý đến chính nó với trọng số 1.00; journey chia 0.55 và 0.45 giữa Your và chính nó; hàng cuối cùng, step, trải trọng số từ 0.15 đến 0.19 lên cả sáu token."
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
# Hàng đầu tiên giờ là $[1, 0, 0, 0, 0, 0]$: token đầu tiên không có gì đứng trước, nên nó chỉ có
# thể chú ý đến chính nó.
#
# ## 3.5.2 Che thêm các trọng số chú ý bằng dropout
#
# **Dropout** đặt về 0 các giá trị được chọn ngẫu nhiên trong lúc huấn luyện, để mô hình không thể
# trở nên phụ thuộc vào bất kỳ giá trị cụ thể nào; dropout được tắt khi suy luận (inference).
# Trong attention, nó được áp dụng lên các trọng số chú ý. Với tỉ lệ dropout $p$, mỗi giá trị bị
# đặt về 0 với xác suất $p$, còn các giá trị sống sót được nhân với $1 / (1 - p)$, để tính trung
# bình mỗi trọng số vẫn giữ nguyên độ lớn:
#
# $$
# \mathbb{E}[\text{dropout}(a)] = (1 - p) \cdot \frac{a}{1 - p} + p \cdot 0 = a
# $$
#
# Với $p = 0.5$, các giá trị sống sót được nhân đôi. Đây là dropout trên một ma trận toàn số 1:

# %% nondeterministic="which entries dropout zeroes depends on the PyTorch version and platform; the next cell checks the rule instead"
torch.manual_seed(123)
dropout = torch.nn.Dropout(0.5)
example = torch.ones(6, 6)
dropped = dropout(example)
print(dropped)

# %% [markdown]
# > **Mẫu của bạn có thể khác.** Những phần tử nào bị đặt về 0 phụ thuộc vào cách phiên bản
# > PyTorch và nền tảng của bạn sinh số ngẫu nhiên, nên kết quả in trong sách và kết quả của bạn có
# > thể cho thấy các mẫu khác nhau, dù dùng cùng seed. Điều phải đúng ở mọi nơi là quy tắc: mọi phần tử
# > đều bằng 0 hoặc $1 / (1 - p) = 2$, và khoảng một nửa số phần tử bằng 0.

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
# Khi áp dụng lên các trọng số nhân quả, dropout loại bỏ một số kết nối; các trọng số còn lại
# được nhân đôi, nên tổng mỗi hàng không còn bằng 1 nữa nhưng tính trung bình vẫn giữ được tổng
# đó.

# %% nondeterministic="a dropout pattern again: it depends on the PyTorch version and platform"
torch.manual_seed(123)
dropped_weights = dropout(attn_weights)
print(dropped_weights)

# %% caption="Hình 4. Các trọng số nhân quả sau dropout với p = 0.5 (các giá trị sống sót được nhân đôi)." alt="Bản đồ nhiệt của các trọng số causal attention sau dropout với tỉ lệ 0.5. Ngoài các số 0 phía trên đường chéo, dropout còn đặt ngẫu nhiên về 0 một số phần tử còn lại, và mỗi trọng số sống sót có giá trị gấp đôi giá trị của nó trong Hình 3."
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
# ## 3.5.3 Cài đặt một lớp causal attention gọn nhẹ
#
# Đầu vào thực tế đến theo từng batch (lô). Xếp chồng câu này hai lần cho ta một batch có shape
# `(batch, num_tokens, d_in)`:

# %%
batch = torch.stack((inputs, inputs), dim=0)
print(batch.shape)
# Out:
# torch.Size([2, 6, 3])

# %% [markdown]
# [`CausalAttention`][attention_mechanisms.causal.CausalAttention] kết hợp mọi thứ trên trang
# này: các phép chiếu `nn.Linear`, mask $-\infty$, chia tỉ lệ, softmax và dropout trên các trọng
# số. Dưới đây là lớp này, đúng như bản phát hành trong gói; ô này định nghĩa lớp ngay trong notebook (ô
# đầu tiên đã import những gì nó cần), nên bạn có thể sửa nó rồi chạy lại các ô phía sau:

# %% include="attention_mechanisms.causal.CausalAttention"

# %% [markdown]
# Từng dòng một, đối chiếu với các bước ở trên:
#
# - `__init__` tạo ba phép chiếu theo thứ tự query, key, value, rồi đến
#   `self.dropout = nn.Dropout(...)`, và đăng ký mask
#   `torch.triu(torch.ones(context_length, context_length), diagonal=1)` làm một buffer (bộ đệm,
#   xem bên dưới). `context_length` là độ dài chuỗi lớn nhất mà module sẽ gặp.
# - `forward` kiểm tra `x` và đọc `num_tokens`, tức là `b, num_tokens, d_in = x.shape` của sách,
#   được viết lại sao cho một chuỗi đơn lẻ `(T, d_in)` cũng chạy được.
# - `keys`, `queries`, `values`: ba phép chiếu.
# - `attn_scores = queries @ keys.transpose(-2, -1)`: tương ứng với `transpose(1, 2)` của sách
#   cho một batch, hoán đổi chiều token và chiều đặc trưng của mỗi chuỗi.
# - `attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)`: góc trên
#   bên trái của mask, dành cho những đầu vào ngắn hơn `context_length`; dấu `_` ở cuối nghĩa là
#   điền tại chỗ (in-place). Đường chéo không bao giờ bị che, nên không có hàng nào toàn
#   $-\infty$.
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`, rồi
#   `attn_weights = self.dropout(attn_weights)`, bước này chỉ đặt trọng số về 0 ở chế độ huấn
#   luyện.
# - `context_vec = attn_weights @ values`: `(b, num_tokens, d_out)`.
#
# Trên batch này, với `dropout=0.0`, hai bản sao của câu cho ra cùng các vector ngữ cảnh (context
# vectors), và hàng của token đầu tiên chỉ phụ thuộc vào token đầu tiên:

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
# ### Vì sao mask là một buffer
#
# Lớp này lưu mask bằng `self.register_buffer("mask", ...)` thay vì dùng một thuộc tính thông
# thường `self.mask = ...`. Buffer là một phần trạng thái của module nhưng không phải là tham số
# huấn luyện được, và điều đó dẫn đến hai hệ quả:
#
# 1. **Nó di chuyển cùng module.** `model.to("cuda")` hay `model.to(torch.float64)` di chuyển cả
#    tham số *lẫn* buffer; một thuộc tính thông thường sẽ bị bỏ lại trên CPU, và lượt forward đầu
#    tiên trên GPU sẽ thất bại vì thiết bị không khớp (device mismatch).
# 2. **Nó được lưu và nạp lại.** `state_dict()` bao gồm cả buffer, nên một checkpoint mang theo
#    mask.
#
# Cả hai điều này đều dễ thấy mà không cần GPU:

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
# Trang [Lỗi thường gặp](pitfalls.py) cho thấy điều gì sẽ hỏng khi dùng một thuộc tính thông
# thường. Tiếp theo, ta chạy nhiều head (đầu) causal attention song song, cạnh nhau:
# [multi-head attention](05-multi-head-attention.py).
