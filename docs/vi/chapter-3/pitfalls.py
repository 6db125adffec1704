# %% [markdown] english="87a3e569bc77"
# # Lỗi thường gặp
#
# Những lỗi mà người đọc thực sự mắc phải khi gõ lại code của chương 3, mỗi lỗi kèm theo thông
# báo lỗi mà nó thực sự gây ra (trang này đã được chạy khi xây dựng trang web). Một số lỗi hoàn
# toàn không phát sinh ngoại lệ mà âm thầm tính ra một thứ khác; đó mới là những lỗi nguy hiểm.

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
# ## view sau transpose mà không có contiguous
#
# Khi `MultiHeadAttention` ghép các head (đầu) lại, tensor ngữ cảnh vừa mới được chuyển vị.
# `transpose` chỉ hoán đổi các stride (bước nhảy), và `view` không thể diễn giải lại một vùng bộ
# nhớ không còn được sắp xếp theo từng hàng:

# %% tags=["raises-exception"] raises="RuntimeError: view size is not compatible with input tensor's size and stride"
context = torch.randn(2, 3, 6, 4)  # (b, num_heads, num_tokens, head_dim)
context.transpose(1, 2).view(2, 6, 12)

# %% [markdown]
# **Cách sửa:** `.transpose(1, 2).contiguous().view(2, 6, 12)`, hoặc `.reshape(2, 6, 12)`, hàm
# này chỉ sao chép dữ liệu khi cần thiết.

# %%
print(context.transpose(1, 2).contiguous().view(2, 6, 12).shape)
# Out:
# torch.Size([2, 6, 12])

# %% [markdown]
# ## Tách các head mà không có transpose
#
# Bước tách các head cũng có cái bẫy riêng. `.view(b, num_heads, num_tokens, head_dim)` vẫn
# chạy và cho đúng shape mà `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)` cho,
# nhưng các con số thì khác. Ở đây có một chuỗi gồm 3 token, mỗi token có 4 đặc trưng (feature),
# cần tách thành 2 head, mỗi head 2 đặc trưng; `torch.arange` đánh số các đặc trưng sao cho token
# $t$ chứa $4t, \dots, 4t + 3$:

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
# `view` không bao giờ di chuyển con số nào; nó chỉ đọc lại cùng vùng bộ nhớ với các kích thước
# mới. Bộ nhớ chứa các đặc trưng lần lượt theo từng token: hết token 0 rồi đến token 1. Xem nó
# dưới dạng `(b, num_tokens, num_heads, head_dim)` là cắt các đặc trưng của mỗi token thành
# `num_heads` phần, đúng với ý nghĩa của việc tách head; sau đó `transpose(1, 2)` đưa chiều head
# lên trước, để head 0 giữ hai đặc trưng đầu của mọi token. Còn xem nó dưới dạng
# `(b, num_heads, num_tokens, head_dim)` thì lại cắt bộ nhớ thành các đoạn liên tiếp, mỗi đoạn
# `head_dim` số: các hàng của "head 0" trong bản lỗi là hai nửa của token 0 và nửa đầu của
# token 1. Các hàng không còn ứng với các token nữa, nên điểm chú ý (attention scores) so sánh
# những mảnh của các token khác nhau, và causal mask (mặt nạ nhân quả) che nhầm mảnh.
#
# **Cách sửa:** tách chiều cuối cùng trước, rồi mới chuyển vị:
# `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)`, như sách làm.
#
# ## torch.cat không có dim=-1
#
# `MultiHeadAttentionWrapper` ghép các head bằng `torch.cat(..., dim=-1)`. Thiếu `dim=-1`,
# `torch.cat` ghép theo chiều 0, tức là chiều batch. Mỗi head trả về `(b, num_tokens, d_out)` =
# `(2, 6, 2)`, nên hai head thành một batch (lô) gồm bốn chuỗi, mỗi chuỗi có hai đặc trưng:

# %%
torch.manual_seed(123)
heads = [CausalAttention(3, 2, context_length=6, dropout=0.0) for _ in range(2)]
print(torch.cat([head(batch) for head in heads]).shape)  # the bug
# Out:
# torch.Size([4, 6, 2])

# %% [markdown]
# Dòng này không báo lỗi gì; phải đến tầng đầu tiên cần `2 * d_out = 4` đặc trưng thì mới có lỗi,
# ở một chỗ cách xa nguyên nhân.
#
# **Cách sửa:** `torch.cat([head(x) for head in self.heads], dim=-1)`, đặt các head cạnh nhau
# theo chiều đặc trưng:

# %%
print(torch.cat([head(batch) for head in heads], dim=-1).shape)
# Out:
# torch.Size([2, 6, 4])

# %% [markdown]
# ## d_out: của mỗi head hay của tất cả các head
#
# Hai lớp multi-head attention (attention nhiều đầu) hiểu `d_out` theo hai cách khác nhau. Trong
# `MultiHeadAttentionWrapper`, đó là kích thước của **mỗi** head, và các head được nối lại với
# nhau, nên đầu ra có `num_heads * d_out` đặc trưng. Trong `MultiHeadAttention`, đó là kích thước
# của **toàn bộ** đầu ra, được chia thành các head có kích thước `head_dim = d_out // num_heads`.
# Vì vậy, cùng một bộ đối số lại cho ra đầu ra có độ rộng khác nhau:

# %%
wrapper = MultiHeadAttentionWrapper(3, 2, context_length=6, dropout=0.0, num_heads=2)
mha = MultiHeadAttention(3, 2, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttentionWrapper:", wrapper(batch).shape)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttentionWrapper: torch.Size([2, 6, 4])
# MultiHeadAttention:        torch.Size([2, 6, 2]) head_dim: 1

# %% [markdown]
# **Cách sửa:** để có `k` đặc trưng đầu ra từ `h` head, truyền `d_out = k / h` cho
# `MultiHeadAttentionWrapper` và `d_out = k` cho `MultiHeadAttention`. Muốn có độ rộng 4 như
# wrapper (lớp bọc) ở trên, `MultiHeadAttention` cần `d_out=4`; khi đó cả hai đều có hai head,
# mỗi head hai đặc trưng. ([Bài tập 3.2](exercises.py) đi theo chiều ngược lại: `d_out=1` cho
# wrapper độ rộng 2.)

# %%
mha = MultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttention:        torch.Size([2, 6, 4]) head_dim: 2

# %% [markdown]
# ## Gọi x.shape(-1)
#
# `shape` là một thuộc tính (một `torch.Size`, vốn là một tuple), không phải một phương thức. Gọi
# nó như một hàm là lỗi sơ ý phổ biến khi cần kích thước của chiều cuối cùng để tính hệ số chia tỉ
# lệ:

# %% tags=["raises-exception"] raises="TypeError: 'torch.Size' object is not callable"
query = torch.randn(6, 2)
d_k = query.shape(-1)

# %% [markdown]
# **Cách sửa:** dùng chỉ số, `query.shape[-1]`, hoặc gọi phương thức `query.size(-1)`.

# %%
print(query.shape[-1], query.size(-1))
# Out:
# 2 2

# %% [markdown]
# ## Dấu phẩy thừa ở cuối: self.d_out = d_out,
#
# Một dấu phẩy ở cuối sẽ tạo ra một tuple. Phép gán vẫn thành công, và lỗi chỉ xuất hiện muộn hơn
# nhiều, ở một dòng trông hoàn toàn đúng:


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
# **Cách sửa:** xóa dấu phẩy. Đặt `print(type(self.d_out))` bên trong `__init__` sẽ giúp bạn
# nhanh chóng tìm ra nó.
#
# ## tril hay triu: mask đánh dấu những vị trí nào?
#
# Trong chương này có hai quy ước về mask. Buffer (bộ đệm) của sách đánh dấu các
# vị trí cần **che** (`torch.triu(..., diagonal=1)`, các số 1 nằm phía trên đường chéo). Một ma
# trận `torch.tril(...)` đánh dấu các vị trí cần **giữ**. Dùng mask giữ ở chỗ lẽ ra phải là mask
# che thì chẳng có gì báo lỗi: mô hình chỉ đơn giản là chú ý đến tương lai và bỏ qua quá khứ.

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
# Phiên bản sai che mất đường chéo và mọi thứ đứng trước nó, nên token đầu tiên chỉ chú ý đến
# tương lai, còn token cuối cùng thì không còn lại gì cả: một hàng toàn `-inf` trở thành NaN sau
# softmax. Một phép kiểm tra nhanh sẽ phát hiện ra lỗi này: hàng đầu tiên của các trọng số nhân
# quả phải là $[1, 0, 0, \dots]$, và việc thay đổi các token phía sau không được làm thay đổi các
# đầu ra phía trước. (Hàm `scaled_dot_product_attention` của chính PyTorch nhận một mask **giữ**
# kiểu boolean, nên ở đó cũng dễ nhầm, theo chiều ngược lại, như mục tiếp theo cho thấy; còn
# `torch.nn.MultiheadAttention` thì nhận một mask **che** kiểu boolean. Dạng hàm (functional) của
# gói (package) đặt tên đối số là `hide_mask` để không thể bị hiểu nhầm.)
#
# ## Đưa mask của sách vào scaled_dot_product_attention
#
# `torch.nn.functional.scaled_dot_product_attention` hiểu một `attn_mask` kiểu boolean theo quy
# ước "True = được chú ý đến". Truyền cho nó mask che của sách thì sẽ nhận được đúng các trọng số
# sai ở mục trước. Khi dùng ma trận đơn vị làm key (khóa) và value (giá trị), cùng với
# `scale=1.0`, hàm trả về chính các trọng số chú ý (attention weights) của nó, nên có thể so sánh
# chúng với `right` và `wrong` của mục trước:

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
# Mỗi token chỉ chú ý đến các token đứng sau nó, còn token cuối cùng thì không còn key nào cả. Ở
# mục trước, softmax biến hàng đó thành NaN; còn hàm này trả về một hàng toàn số 0, nên đầu ra của
# token cuối cùng là một vector 0 và không có gì báo hiệu lỗi.
#
# **Cách sửa:** đảo ngược mask, `attn_mask=~hide`, hoặc bỏ mask đi và truyền `is_causal=True`:

# %%
fixed_mask = scaled_dot_product_attention(scores, eye, eye, attn_mask=~hide, scale=1.0)
fixed_causal = scaled_dot_product_attention(scores, eye, eye, is_causal=True, scale=1.0)
print("attn_mask=~hide equals `right`:", torch.allclose(fixed_mask, right))
print("is_causal=True equals `right`: ", torch.allclose(fixed_causal, right))
# Out:
# attn_mask=~hide equals `right`: True
# is_causal=True equals `right`:  True

# %% [markdown]
# ## Mask lưu dưới dạng thuộc tính thông thường
#
# Gán mask bằng `self.mask = ...` thay vì `self.register_buffer("mask", ...)` vẫn chạy được trên
# CPU, nhưng mask không đi theo module khi module được chuyển sang thiết bị khác. Ở đây module
# được chuyển sang thiết bị `meta` của PyTorch (một thiết bị không chứa dữ liệu, đóng vai GPU trên
# máy xây dựng trang web, vốn chỉ có CPU); còn mask thì bị bỏ lại:


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
# Mask cũng không có trong checkpoint, trong khi một buffer thì được lưu cùng:

# %%
print("plain attribute:", list(PlainMask(3, 2, 6).state_dict()))
print("buffer:         ", list(CausalAttention(3, 2, 6, 0.0).state_dict()))
# Out:
# plain attribute: ['W_query.weight', 'W_key.weight']
# buffer:          ['mask', 'W_query.weight', 'W_key.weight', 'W_value.weight']

# %% [markdown]
# ## Softmax naive bị tràn số
#
# $e^x$ vượt quá số float32 lớn nhất khi $x > 88.7$. Khi đã chia tỉ lệ, điểm chú ý lớn như vậy
# rất hiếm, nhưng vẫn có lúc gặp, và khi đó công thức softmax naive (tính thẳng theo định nghĩa)
# trả về NaN:


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
# **Cách sửa:** dùng `torch.softmax`, hàm này trừ đi giá trị lớn nhất trước.
#
# ## Chia tỉ lệ sau softmax
#
# Các điểm được chia cho $\sqrt{d_k}$ **trước** softmax. Chia các trọng số sau softmax, tức là
# `torch.softmax(attn_scores, dim=-1) / d_k**0.5`, vẫn chạy mà không báo lỗi gì, nhưng tổng mỗi
# hàng không còn bằng 1 nữa. Ở đây ta dùng lại các trọng số mà sách sinh ngẫu nhiên với seed cố
# định ở mục 3.4:

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
# Tổng mỗi hàng bằng $1 / \sqrt{2} \approx 0.7071$, nên mỗi vector ngữ cảnh (context vector) là
# một tổng có trọng số bị co nhỏ lại, không còn là trung bình có trọng số. Hơn nữa, phép chia tỉ lệ
# không còn làm được việc của nó: chia tỉ lệ là để giữ các điểm nhỏ trước khi vào softmax, vì điểm
# lớn đẩy đầu ra softmax về gần một vector chỉ có một số 1, khi đó gradient của softmax rất nhỏ
# (xem [mục 3.4](03-trainable-self-attention.py)). Chia sau softmax thì không sửa được điều đó:
# nhân ngược lại với $\sqrt{2}$, hàng sai chính là softmax của các điểm chưa chia tỉ lệ, tập trung
# hơn hàng đúng: trọng số lớn nhất của nó là 0.2507 thay vì 0.2264.
#
# **Cách sửa:** `torch.softmax(attn_scores / d_k**0.5, dim=-1)`, đúng như sách viết.
#
# ## Dropout trước softmax
#
# Dropout phải tác động lên các **trọng số** chú ý, sau softmax. Nếu áp dụng lên các điểm trước
# softmax, một điểm bị loại sẽ thành 0, mà điểm bằng 0 thì không bị che: softmax vẫn cho nó trọng
# số $e^0 / \sum_j e^{s_j}$ như mọi điểm khác. Chỉ $-\infty$ mới che được một vị trí. Ở đây, các
# điểm của sách cho "journey" được dropout với $p = 0.5$ theo cùng một tập vị trí bị loại, một lần
# trước và một lần sau softmax. (`nn.Dropout` tự sinh ngẫu nhiên các vị trí bị loại; ở đây ta sinh
# chúng từ một generator có seed cố định để các con số trên trang này giống nhau trên mọi nền
# tảng.)

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
# Khi dropout trước softmax, mọi token bị loại vẫn nhận được trọng số, và tổng các trọng số vẫn
# bằng 1, nên dropout không còn cắt bỏ liên kết nào; nó chỉ dồn thêm trọng số về các token còn
# lại, có điểm đã bị nhân đôi. Khi dropout sau softmax, các trọng số bị loại đúng bằng 0 và các
# trọng số còn lại được nhân đôi, nên tổng chỉ bằng 1 khi tính trung bình, như
# [mục 3.5.2](04-causal-attention.py) giải thích.
#
# **Cách sửa:** `attn_weights = self.dropout(torch.softmax(...))`, tức là dropout sau softmax.
#
# ## Chia các giá trị còn lại sau dropout cho p
#
# Dropout nhân các giá trị không bị loại với $1 / (1 - p)$, để tính trung bình thì mỗi giá trị
# vẫn giữ nguyên độ lớn. Một hàm dropout tự viết mà lại chia cho $p$ trông vẫn đúng với
# $p = 0.5$ của sách, vì khi đó $1 / p$ và $1 / (1 - p)$ đều bằng 2. Với $p = 0.25$ thì không: mỗi
# giá trị được giữ lại với xác suất 0.75 rồi bị nhân với 4, nên tính trung bình nó lớn gấp ba.
# Lấy trung bình của một triệu bản sao của cùng một hàng sau dropout là thấy ngay:


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
# `nn.Dropout` giữ nguyên kỳ vọng: trung bình của nó chính là hàng ban đầu. (Với một triệu bản
# sao, sai số ngẫu nhiên của mỗi giá trị trung bình nhỏ hơn một phần nghìn, nhỏ hơn nhiều so với
# hai chữ số thập phân được in ra.)
#
# **Cách sửa:** `x * keep / (1 - p)`, hoặc dùng `nn.Dropout(p)`. Với cùng các vị trí bị loại như
# trên:

# %%
keep = torch.rand(copies.shape, generator=torch.Generator().manual_seed(123)) >= 0.25
print("divided by 1 - p:", (copies * keep / (1 - 0.25)).mean(dim=0).round(decimals=2))
# Out:
# divided by 1 - p: tensor([0.2000, 0.3000, 0.5000])

# %% [markdown]
# ## Nhiều token hơn context_length
#
# Mask được tạo với kích thước dành cho `context_length` token. Lớp trong sách cắt nó bằng
# `[:num_tokens, :num_tokens]`; với một đầu vào dài hơn thì lát cắt quá nhỏ, và lỗi phát sinh từ
# sâu bên trong bước áp mask:


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
# Gói kiểm tra đầu vào trước và cho biết điều gì sai và cần làm gì:

# %% tags=["raises-exception"] raises="ValueError: x has 7 tokens, more than context_length=6"
CausalAttention(3, 2, context_length=6, dropout=0.0)(seven_tokens)

# %% [markdown]
# ## Ít token hơn context_length
#
# Đầu vào ít token hơn thì được phép, và chính lát cắt `[:num_tokens, :num_tokens]` giúp nó chạy
# được. Bỏ lát cắt đi thì toàn bộ mask `(context_length, context_length)` bị áp lên các điểm. Khi
# có đúng `context_length` token, các kích thước khớp nhau, nên lớp vẫn qua được phép thử trên sáu
# token của sách; nhưng mọi đầu vào ngắn hơn, chẳng hạn một prompt (lời nhắc) ngắn khi mô hình
# sinh văn bản, đều gây lỗi. Thông báo lỗi giống ở mục trước, chỉ đổi chỗ hai kích thước: ở đó
# đầu vào quá dài so với mask, còn ở đây mask quá lớn so với đầu vào, và các điểm (tensor a) nhỏ
# hơn mask (tensor b).


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
# **Cách sửa:** cắt mask theo đầu vào, `self.mask.bool()[:num_tokens, :num_tokens]`, với
# `num_tokens = x.shape[1]`, như lớp của sách ở trên:

# %%
print("4 tokens:", BookCausalScores(3, 2, context_length=6)(batch[:, :4]).shape)
# Out:
# 4 tokens: torch.Size([2, 4, 4])
