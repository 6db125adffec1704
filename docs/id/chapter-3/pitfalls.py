# %% [markdown] english="d81d7367d166"
# # Jebakan umum
#
# Kesalahan yang benar-benar dibuat pembaca ketika mengetik ulang kode bab 3, masing-masing
# dengan error yang benar-benar dihasilkannya (halaman ini dieksekusi ketika situs dibangun).
# Sebagian tidak memunculkan error sama sekali dan diam-diam menghitung sesuatu yang lain;
# itulah yang berbahaya.

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
# ## view setelah transpose, tanpa contiguous
#
# Ketika `MultiHeadAttention` menggabungkan head-head-nya, tensor konteks baru saja
# ditranspos. `transpose` hanya menukar stride, dan `view` tidak dapat menafsirkan ulang memori
# yang tidak lagi tersusun baris demi baris:

# %% tags=["raises-exception"] raises="RuntimeError: view size is not compatible with input tensor's size and stride"
context = torch.randn(2, 3, 6, 4)  # (b, num_heads, num_tokens, head_dim)
context.transpose(1, 2).view(2, 6, 12)

# %% [markdown]
# **Perbaikan:** `.transpose(1, 2).contiguous().view(2, 6, 12)`, atau `.reshape(2, 6, 12)`,
# yang hanya menyalin data jika memang perlu.

# %%
print(context.transpose(1, 2).contiguous().view(2, 6, 12).shape)
# Out:
# torch.Size([2, 6, 12])

# %% [markdown]
# ## Memanggil x.shape(-1)
#
# `shape` adalah atribut (sebuah `torch.Size`, yang merupakan tuple), bukan method.
# Memanggilnya adalah kekeliruan yang umum ketika ukuran dimensi terakhir dibutuhkan untuk
# faktor penskalaan:

# %% tags=["raises-exception"] raises="TypeError: 'torch.Size' object is not callable"
query = torch.randn(6, 2)
d_k = query.shape(-1)

# %% [markdown]
# **Perbaikan:** indeks atribut itu, `query.shape[-1]`, atau panggil method `query.size(-1)`.

# %%
print(query.shape[-1], query.size(-1))
# Out:
# 2 2

# %% [markdown]
# ## Koma di akhir: self.d_out = d_out,
#
# Koma di akhir menghasilkan tuple. Penugasannya berhasil, dan error baru muncul jauh
# kemudian, di baris yang tampak benar:


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
# **Perbaikan:** hapus komanya. `print(type(self.d_out))` di dalam `__init__` cepat
# menemukannya.
#
# ## tril atau triu: posisi mana yang ditandai mask?
#
# Dua konvensi bertemu di bab ini. Buffer di buku menandai posisi yang **disembunyikan**
# (`torch.triu(..., diagonal=1)`, angka satu di atas diagonal). Matriks `torch.tril(...)`
# menandai posisi yang **dipertahankan**. Jika mask pertahankan (keep mask) dipakai di tempat
# yang seharusnya diisi mask sembunyikan (hide mask), tidak ada yang gagal: model begitu saja
# memperhatikan masa depan dan mengabaikan masa lalu.

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
# Versi yang salah menyembunyikan diagonal dan semua yang ada sebelumnya, sehingga token
# pertama hanya memperhatikan masa depan, dan token terakhir sama sekali tidak punya apa pun
# yang tersisa: baris yang seluruhnya `-inf` menjadi NaN setelah softmax. Sebuah uji sederhana
# dapat menangkapnya: baris pertama bobot kausal harus $[1, 0, 0, \dots]$, dan mengubah
# token-token yang lebih belakang tidak boleh mengubah output yang lebih awal.
# (`scaled_dot_product_attention` milik PyTorch sendiri menerima mask boolean yang menandai
# posisi yang **dipertahankan**, sedangkan `torch.nn.MultiheadAttention` menerima mask boolean
# yang menandai posisi yang **disembunyikan**; bentuk fungsional dari paket ini menamai
# argumennya `hide_mask` agar tidak bisa salah dibaca.)

# %% [markdown]
# ## Mask yang disimpan sebagai atribut biasa
#
# Menetapkan mask dengan `self.mask = ...` alih-alih `self.register_buffer("mask", ...)`
# berjalan lancar di CPU, tetapi mask tersebut tidak ikut berpindah ketika modul dipindahkan
# ke perangkat (device) lain. Di sini modul dipindahkan ke perangkat `meta` milik PyTorch
# (perangkat tanpa data, yang menggantikan GPU pada mesin build yang hanya memiliki CPU ini);
# mask-nya tertinggal:


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
# Mask itu juga tidak ada di checkpoint, sedangkan buffer ikut tersimpan bersamanya:

# %%
print("plain attribute:", list(PlainMask(3, 2, 6).state_dict()))
print("buffer:         ", list(CausalAttention(3, 2, 6, 0.0).state_dict()))
# Out:
# plain attribute: ['W_query.weight', 'W_key.weight']
# buffer:          ['mask', 'W_query.weight', 'W_key.weight', 'W_value.weight']

# %% [markdown]
# ## Softmax naif meluap (overflow)
#
# $e^x$ melampaui bilangan float32 terbesar begitu $x > 88.7$. Skor sebesar itu jarang muncul
# jika ada penskalaan, tetapi tetap bisa terjadi, dan rumus naif lalu mengembalikan NaN:


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
# **Perbaikan:** gunakan `torch.softmax`, yang mengurangkan nilai maksimum terlebih dahulu.
#
# ## Token lebih banyak daripada context_length
#
# Mask berukuran untuk `context_length` token. Kelas di buku memotongnya dengan
# `[:num_tokens, :num_tokens]`; dengan input yang lebih panjang, potongannya terlalu kecil, dan
# error muncul dari dalam langkah masking:


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
# Paket ini memeriksa input terlebih dahulu dan mengatakan apa yang salah dan apa yang harus
# dilakukan:

# %% tags=["raises-exception"] raises="ValueError: x has 7 tokens, more than context_length=6"
CausalAttention(3, 2, context_length=6, dropout=0.0)(seven_tokens)
