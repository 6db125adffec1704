# %% [markdown] english="9361a7c26a87"
# # Multi-head attention
#
# Bagian 3.6 buku: memperluas single-head attention menjadi multi-head attention. Satu modul
# causal attention mempelajari satu cara menghubungkan token-token satu sama lain.
# **Multi-head attention** menjalankan beberapa modul seperti itu, yaitu *head* (kepala),
# secara paralel, masing-masing dengan bobotnya sendiri, sehingga setiap head dapat mempelajari
# jenis hubungan yang berbeda (kata mana yang dirujuk oleh sebuah kata ganti, kata kerja mana
# yang berpasangan dengan subjek mana, ...). Output-output mereka digabungkan menjadi satu
# vektor per token.

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
# ## 3.6.1 Menumpuk beberapa layer single-head attention
#
# Versi yang paling harfiah menyimpan sebuah daftar modul `CausalAttention` dan
# menyambungkan (concatenate) output-outputnya di sepanjang dimensi terakhir:
#
# $$
# \operatorname{MultiHead}(X) = \left[\operatorname{head}_1(X) \,\|\, \operatorname{head}_2(X)
# \,\|\, \cdots \,\|\, \operatorname{head}_h(X)\right]
# $$
#
# Itulah [`MultiHeadAttentionWrapper`][attention_mechanisms.multihead.MultiHeadAttentionWrapper],
# sebagaimana dirilis dalam paket (sel ini mendefinisikannya di sini, sehingga Anda dapat
# mengubahnya lalu melanjutkan):

# %% include="attention_mechanisms.multihead.MultiHeadAttentionWrapper"

# %% [markdown]
# `__init__` membangun `num_heads` modul `CausalAttention` yang saling independen, masing-masing
# dengan proyeksinya sendiri, dan menyimpannya dalam sebuah `nn.ModuleList` agar parameternya
# menjadi milik wrapper. `forward` menjalankannya satu per satu pada `x` yang sama dan
# menggabungkan output-outputnya dengan `torch.cat(..., dim=-1)`. Dengan dua head yang
# masing-masing ber-`d_out=2`, setiap token mendapat $2 \times 2 = 4$ fitur output:

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
# Dua kolom pertama berasal dari head pertama, dua kolom terakhir dari head kedua. Kedua
# kalimat dalam batch ini sama, sehingga kedua bagian output juga sama.
#
# Setiap head memiliki pola perhatiannya sendiri. Bobot perhatian (attention weights) tidak
# dikembalikan oleh modul-modul ini, tetapi proyeksi setiap head tersedia untuk menghitungnya
# kembali:

# %% caption="Gambar 5. Bobot causal attention dari kedua head MultiHeadAttentionWrapper." alt="Dua peta panas (heatmap) berdampingan, satu untuk setiap head, masing-masing berupa matriks segitiga bawah 6 kali 6 berisi bobot causal attention pada token Your, journey, starts, with, one, step. Kedua head, yang memiliki bobot acak berbeda, menyebarkan perhatiannya secara berbeda pada token-token sebelumnya."
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
# ### Memilih ukuran output
#
# Ukuran output wrapper ini adalah `d_out * num_heads`. Untuk mendapatkan vektor konteks
# (context vectors) 2 dimensi dari dua head, beri setiap head `d_out=1` (ini juga Latihan 3.2
# di buku):

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
# ## 3.6.2 Mengimplementasikan multi-head attention dengan pemisahan bobot
#
# Wrapper menjalankan head-nya satu per satu, masing-masing dengan tiga perkalian matriks
# kecil. [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention] menghitung
# semua head sekaligus:
#
# 1. Satu `nn.Linear(d_in, d_out)` per peran memproyeksikan query (key, value) dari **semua**
#    head dalam satu perkalian.
# 2. Dimensi terakhir, `d_out`, **dipecah** menjadi `num_heads` bagian berukuran
#    `head_dim = d_out // num_heads`, satu untuk setiap head, dengan `.view`.
# 3. `.transpose(1, 2)` memindahkan dimensi head ke depan dimensi token, sehingga
#    tensor-tensornya berbentuk `(b, num_heads, num_tokens, head_dim)`.
# 4. Satu perkalian matriks ber-batch menghitung attention untuk setiap head.
# 5. Head-head itu diletakkan kembali berdampingan (`.transpose`, `.contiguous`, `.view`) dan
#    sebuah proyeksi output (output projection) `out_proj` mencampurnya.
#
# ### Menelusuri perubahan bentuk pada tensor kecil
#
# Ambil satu kalimat (`b = 1`) berisi tiga token, dengan `d_out = 4` dipecah menjadi dua head
# berukuran 2. Angka 0 sampai 11 memudahkan kita mengikuti ke mana setiap nilai pergi:

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
# `view` tidak pernah memindahkan data: ia menafsirkan ulang memori yang sama dengan bentuk
# baru. `transpose` juga tidak memindahkan data; ia hanya menukar dua *stride*, sehingga tensor
# tidak lagi tersimpan baris demi baris:

# %%
print("contiguous after view:     ", split.is_contiguous(), split.stride())
print("contiguous after transpose:", per_head.is_contiguous(), per_head.stride())
# Out:
# contiguous after view:      True (12, 4, 2, 1)
# contiguous after transpose: False (12, 2, 4, 1)

# %% [markdown]
# Untuk menggabungkan head-head itu lagi, kita mentranspos balik dan meratakan dua dimensi
# terakhir. Karena tensor yang sudah ditranspos tidak tersimpan baris demi baris, `view`
# memerlukan `.contiguous()` terlebih dahulu, yang menyalin data ke urutan yang baru (halaman
# [Jebakan umum](pitfalls.py) menunjukkan error yang muncul tanpanya):

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
# ### Perkalian matriks ber-batch
#
# `@` pada tensor dengan lebih dari dua dimensi mengalikan **dua dimensi terakhir** dan
# memperlakukan semua dimensi lainnya sebagai batch. Tensor ini berbentuk
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
# Itu adalah satu perkalian $3 \times 3$ per head, dihitung dalam satu pemanggilan. Menghitungnya
# head demi head memberikan angka yang sama:

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
# ### Kelasnya
#
# Jika semuanya digabungkan, kita mendapatkan
# [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention] dari paket ini,
# ditampilkan dan didefinisikan di sini sebagaimana dirilis:

# %% include="attention_mechanisms.multihead.MultiHeadAttention"

# %% [markdown]
# Baris demi baris, dibandingkan dengan langkah-langkah yang ditelusuri di atas:
#
# - `__init__` memeriksa ukuran-ukurannya, dengan `head_dim = d_out // num_heads` (`check_heads`
#   menolak `d_out` yang tidak habis dibagi), lalu membuat `W_query`, `W_key`, `W_value`,
#   kemudian `out_proj`, `dropout`, dan buffer `mask`. Urutan pembuatan itulah yang membuat
#   `torch.manual_seed(123)` menghasilkan angka-angka di buku.
# - `forward` memperlakukan satu urutan sebagai batch berisi satu, lalu membaca
#   `b, num_tokens`.
# - Ketiga proyeksi menghasilkan `(b, num_tokens, d_out)`; `.view(b, num_tokens,
#   num_heads, head_dim)` memecah dimensi terakhir menjadi head, dan `.transpose(1, 2)`
#   membawa head ke depan: `(b, num_heads, num_tokens, head_dim)`.
# - `attn_scores = queries @ keys.transpose(2, 3)`: satu perkalian ber-batch menghasilkan skor
#   perhatian setiap head, `(b, num_heads, num_tokens, num_tokens)`.
# - Mask, softmax yang diskalakan, dan dropout adalah baris-baris dari `CausalAttention`, yang
#   diterapkan pada semua head sekaligus.
# - `(attn_weights @ values).transpose(1, 2)` mengembalikan token ke depan;
#   `.contiguous().view(b, num_tokens, self.d_out)` menggabungkan head-head itu lagi, seperti
#   yang dilakukan `torch.cat` pada wrapper.
# - `self.out_proj(context_vec)` mencampur output dari head-head tersebut, sebuah layer yang
#   tidak dimiliki wrapper.
#
# Dengan seed dan ukuran dari buku (`d_out=2` dipecah ke dua head berukuran 1):

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
# Ukuran output sekarang adalah `d_out` itu sendiri, berapa pun jumlah head-nya. Pola perhatian
# per head dapat dihitung kembali dari proyeksi yang sudah dipecah:

# %% caption="Gambar 6. Bobot causal attention dari setiap head MultiHeadAttention." alt="Dua peta panas (heatmap) berdampingan, satu untuk setiap head MultiHeadAttention, masing-masing berupa matriks segitiga bawah 6 kali 6 berisi bobot causal attention. Setiap head hanya memiliki satu fitur query dan key, sehingga bobotnya mengikuti pola yang berbeda dari head yang lain."
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
# ### Pada ukuran GPT-2
#
# Model GPT-2 terkecil memakai embedding berdimensi 768, 12 head, dan konteks 1024 token.
# Multi-head attention-nya kemudian memiliki $3 \times 768^2$ bobot proyeksi ditambah proyeksi
# output $768 \times 768$ dengan bias:

# %%
gpt2_mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters, head_dim = {gpt2_mha.head_dim}")
print(f"check: {3 * 768 * 768 + 768 * 768 + 768:,}")
# Out:
# 2,360,064 parameters, head_dim = 64
# check: 2,360,064

# %% [markdown]
# Itu berarti 2,360,064 parameter dalam satu modul attention; GPT-2 small memiliki 12 modul
# seperti itu, satu per blok transformer. [Ringkasan](06-summary.md) merangkum seluruh bab
# dalam satu halaman.
