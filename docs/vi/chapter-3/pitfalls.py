# %% [markdown] english="d81d7367d166"
# # Lỗi thường gặp
#
# Những lỗi mà người đọc thực sự mắc phải khi gõ lại code của chương 3, mỗi lỗi kèm theo thông
# báo lỗi mà nó thực sự gây ra (trang này đã được chạy khi xây dựng trang web). Một số lỗi hoàn
# toàn không phát sinh ngoại lệ mà âm thầm tính ra một thứ khác; đó mới là những lỗi nguy hiểm.

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
# Hai quy ước về mask (mặt nạ) gặp nhau trong chương này. Buffer (bộ đệm) của sách đánh dấu các
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
# kiểu boolean, trong khi `torch.nn.MultiheadAttention` nhận một mask **che** kiểu boolean; dạng
# hàm (functional) của gói (package) đặt tên đối số là `hide_mask` để không thể bị hiểu nhầm.)

# %% [markdown]
# ## Mask lưu dưới dạng thuộc tính thông thường
#
# Gán mask bằng `self.mask = ...` thay vì `self.register_buffer("mask", ...)` vẫn chạy được trên
# CPU, nhưng mask không đi theo module khi module được chuyển sang thiết bị khác. Ở đây module
# được chuyển sang thiết bị `meta` của PyTorch (một thiết bị không chứa dữ liệu, đóng vai GPU trên
# máy build chỉ có CPU này); còn mask thì bị bỏ lại:


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
# $e^x$ vượt quá số float32 lớn nhất khi $x > 88.7$. Nhờ có chia tỉ lệ, điểm chú ý (attention
# scores) lớn như vậy hiếm gặp, nhưng chúng vẫn có thể xảy ra, và khi đó công thức softmax naive
# (tính thẳng theo định nghĩa) trả về NaN:


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
