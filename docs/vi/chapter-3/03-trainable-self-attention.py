# %% [markdown] english="1d50d93593ef"
# # Self-attention với trọng số huấn luyện được
#
# Mục 3.4 của sách: **scaled dot-product attention** (attention tích vô hướng có chia tỉ lệ), loại
# attention được dùng trong GPT và hầu hết các transformer khác. Nó bổ sung ba ma trận trọng số
# (weight matrices) mà mô hình học được trong quá trình huấn luyện: $W_q$, $W_k$ và $W_v$.
#
# Mỗi đầu vào $x^{(i)}$ được chiếu ba lần:
#
# - **query** (truy vấn) của nó, $q^{(i)} = x^{(i)} W_q$: thứ mà token này đang tìm kiếm;
# - **key** (khóa) của nó, $k^{(i)} = x^{(i)} W_k$: thứ mà token này đưa ra để được tìm thấy;
# - **value** (giá trị) của nó, $v^{(i)} = x^{(i)} W_v$: thứ mà token này truyền đi khi được chú ý
#   đến.
#
# Giờ đây điểm chú ý (attention scores) so sánh query với key, $\omega_{ij} = q^{(i)} \cdot k^{(j)}$,
# và vector ngữ cảnh (context vector) trộn các value thay vì các đầu vào thô.

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
# ## 3.4.1 Tính trọng số chú ý (attention weights) từng bước một
#
# Một lần nữa ta theo dõi token thứ hai, "journey". Kích thước đầu vào là 3; sách chọn kích thước
# đầu ra là 2 để các con số nhỏ gọn (các mô hình GPT dùng cùng một kích thước cho cả hai).

# %%
x_2 = inputs[1]
d_in = inputs.shape[1]  # 3
d_out = 2

torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)

# %% [markdown]
# `requires_grad=False` chỉ để các kết quả in ra được ngắn gọn; một mô hình đang được huấn luyện
# thì vẫn để nó bật. Query, key và value của "journey" là ba phép chiếu (projection) của cùng
# một vector:

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
# Để tính điểm của "journey" với mọi token, ta cần key của mọi token, và sau đó là mọi value. Với
# mỗi loại, chỉ một tích ma trận là đủ để chiếu cả sáu token:

# %%
keys = inputs @ W_key  # (6, 2)
values = inputs @ W_value  # (6, 2)
print("keys.shape:  ", keys.shape)
print("values.shape:", values.shape)
# Out:
# keys.shape:   torch.Size([6, 2])
# values.shape: torch.Size([6, 2])

# %% [markdown]
# Điểm của "journey" với chính nó là tích vô hướng giữa query của nó và key của chính nó,
# $\omega_{22} = q^{(2)} \cdot k^{(2)}$:

# %%
attn_score_22 = query_2.dot(keys[1])
print(attn_score_22)
# Out:
# tensor(1.8524)

# %% [markdown]
# và cả sáu điểm của query 2 là một tích vector-ma trận, $\omega_2 = q^{(2)} K^\top$:

# %%
attn_scores_2 = query_2 @ keys.T
print(attn_scores_2)
# Out:
# tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])

# %% [markdown]
# ### Vì sao các điểm được chia tỉ lệ
#
# Trước softmax, các điểm được chia cho $\sqrt{d_k}$, căn bậc hai của kích thước key:
#
# $$
# \alpha_{2j} = \operatorname{softmax}\left(\frac{\omega_2}{\sqrt{d_k}}\right)_j
# $$
#
# Tích vô hướng của hai vector $d_k$ chiều là tổng của $d_k$ số hạng, nên độ phân tán của nó tăng
# theo $d_k$. Điểm lớn đẩy softmax về gần một vector one-hot, nơi gradient của nó gần như bằng 0
# và quá trình huấn luyện bị đình trệ. Chia cho $\sqrt{d_k}$ giữ cho độ phân tán của các điểm gần
# như không phụ thuộc vào kích thước, và cũng là lý do phương pháp này mang tên *scaled*
# dot-product attention (attention tích vô hướng *có chia tỉ lệ*).

# %%
d_k = keys.shape[-1]
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
print(attn_weights_2)
# Out:
# tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])

# %% [markdown]
# Cuối cùng, vector ngữ cảnh của "journey" là tổng có trọng số của các value,
# $z^{(2)} = \sum_j \alpha_{2j} v^{(j)}$:

# %%
context_vec_2 = attn_weights_2 @ values
print(context_vec_2)
# Out:
# tensor([0.3061, 0.8210])

# %% [markdown]
# ## 3.4.2 Cài đặt một lớp Python self-attention gọn nhẹ
#
# Các bước trên, áp dụng cho mọi token cùng lúc, tạo thành một lớp (class). Đây là
# [`SelfAttention_v1`][attention_mechanisms.self_attention.SelfAttention_v1] của gói (package),
# đúng như bản phát hành; ô này định nghĩa lớp ngay trong notebook, nên bạn có thể sửa nó rồi chạy
# lại các ô phía sau. Lớp này tính
#
# $$
# Z = \operatorname{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,
# \qquad Q = X W_q,\; K = X W_k,\; V = X W_v
# $$

# %% include="attention_mechanisms.self_attention.SelfAttention_v1"

# %% [markdown]
# Từng dòng một:
#
# - `__init__` kiểm tra rằng cả hai kích thước đều là số nguyên dương (`check_size`), sau đó tạo
#   `W_query`, `W_key` và `W_value` dưới dạng `nn.Parameter(torch.rand(d_in, d_out))`, theo đúng
#   thứ tự đó: cùng ba lần rút số ngẫu nhiên như ở mục 3.4.1, nên cùng một seed sẽ cho ra cùng các
#   ma trận. `nn.Parameter` đăng ký từng ma trận với module, nhờ đó `parameters()` và
#   `state_dict()` nhìn thấy nó.
# - `forward` trước tiên kiểm tra `x` (`check_tokens`): một tensor số thực dấu phẩy động có shape
#   `(T, d_in)`, hoặc một batch (lô) `(b, T, d_in)`.
# - `keys = x @ self.W_key`, và tương tự với queries và values: mỗi token một hàng, dạng ma trận
#   của `x_2 @ W_key`.
# - `attn_scores = queries @ keys.mT`: mọi $\omega_{ij}$ cùng lúc. `.mT` chuyển vị hai chiều cuối
#   cùng, và với một chuỗi đơn lẻ thì nó chính là `keys.T` trong sách.
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`: chia tỉ lệ cho
#   $\sqrt{d_k}$ và chuẩn hóa theo các key, mỗi hàng có tổng bằng 1.
# - `context_vec = attn_weights @ values`: hàng $i$ là $z^{(i)}$.
#
# Với cùng seed như ở mục 3.4.1, hàng thứ hai của đầu ra chính là vector ngữ cảnh mà ta đã tính
# bằng tay:

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
# [`SelfAttention_v2`][attention_mechanisms.self_attention.SelfAttention_v2] thay các ma trận tự
# tạo bằng các tầng (layer) `nn.Linear`, không có bias trừ khi `qkv_bias=True`:

# %% include="attention_mechanisms.self_attention.SelfAttention_v2"

# %% [markdown]
# Chỉ có hai điểm thay đổi. Trong `__init__`, mỗi phép chiếu là một `nn.Linear(d_in, d_out)`, tầng
# này tính cùng một tích ma trận nhưng bắt đầu từ một cách khởi tạo tốt hơn `torch.rand`, giúp ích
# cho việc huấn luyện. Trong `forward`, `self.W_key(x)` gọi tầng đó thay vì `x @ self.W_key`. Phần
# còn lại, gồm điểm, chia tỉ lệ, softmax và tổng có trọng số, giống hệt nhau từng dòng. Trọng số
# của nó là những số ngẫu nhiên khác, nên đầu ra cũng khác:

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
# Đây là các trọng số chú ý đằng sau đầu ra đó, từng hàng một:

# %% caption="Hình 2. Trọng số chú ý của SelfAttention_v2 sau torch.manual_seed(789)." alt="Bản đồ nhiệt của các trọng số chú ý kích thước 6 nhân 6 của SelfAttention_v2 với các trọng số ngẫu nhiên chưa được huấn luyện. Mọi trọng số đều nằm trong khoảng từ 0.15 đến 0.21, nên mỗi token chú ý đến cả sáu token gần như ngang nhau; cột của Your đậm hơn các cột khác một chút."
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
# Trọng số chưa huấn luyện cho ra attention gần như đồng đều: mô hình chưa học được gì về việc
# token nào quan trọng với token nào.
#
# ### Sao chép trọng số từ v2 sang v1
#
# Hai lớp tính cùng một hàm. `nn.Linear(d_in, d_out)` lưu trọng số của nó dưới dạng một ma trận
# `(d_out, d_in)` và tính `x @ weight.T`, nên việc sao chép trọng số **đã chuyển vị** của v2 vào
# v1 phải làm cho đầu ra của chúng bằng nhau:

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
# Cả hai lớp đều cho phép mỗi token nhìn mọi token khác, kể cả những token đứng sau nó. Một mô
# hình sinh văn bản lần lượt từng token thì không được phép làm vậy;
# [trang tiếp theo](04-causal-attention.py) sẽ che đi tương lai.
