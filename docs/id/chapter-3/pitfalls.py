# %% [markdown] english="87a3e569bc77"
# # Jebakan umum
#
# Kesalahan yang benar-benar dibuat pembaca ketika mengetik ulang kode bab 3, masing-masing
# beserta pesan error asli yang dihasilkannya (halaman ini dieksekusi ketika situs dibangun).
# Sebagian tidak memunculkan error sama sekali dan diam-diam menghitung sesuatu yang lain;
# itulah yang berbahaya.

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
# ## view setelah transpose, tanpa contiguous
#
# Ketika `MultiHeadAttention` menggabungkan semua head-nya, tensor konteks baru saja
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
# ## Memisahkan head tanpa transpose
#
# Memisahkan head punya jebakannya sendiri. `.view(b, num_heads, num_tokens, head_dim)`
# berjalan tanpa error dan menghasilkan bentuk yang sama dengan
# `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)`, tetapi angkanya berbeda. Di sini
# satu urutan berisi 3 token yang masing-masing memiliki 4 fitur, dan akan dipisahkan menjadi
# 2 head berukuran 2; `torch.arange` menomori fitur-fiturnya sehingga token $t$ berisi
# $4t, \dots, 4t + 3$:

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
# `view` tidak pernah memindahkan angka; fungsi ini hanya membaca memori yang sama dengan ukuran
# baru. Memori itu menyimpan fitur token demi token: semua fitur token 0, lalu semua fitur
# token 1. Jika dibaca sebagai `(b, num_tokens, num_heads, head_dim)`, fitur setiap token
# dipotong menjadi `num_heads` bagian, dan itulah arti memisahkan menjadi beberapa head;
# `transpose(1, 2)` lalu memindahkan dimensi head ke depan, sehingga head 0 berisi dua fitur
# pertama dari setiap token. Jika dibaca sebagai `(b, num_heads, num_tokens, head_dim)`, memori
# justru dipotong menjadi deretan berurutan berisi `head_dim` angka: baris-baris "head 0" pada
# versi yang salah berisi kedua paruh token 0 dan paruh pertama token 1. Baris-barisnya bukan
# lagi token, sehingga skor perhatian (attention scores) membandingkan potongan dari token yang
# berbeda, dan mask kausal (causal mask) menyembunyikan potongan yang salah.
#
# **Perbaikan:** pisahkan dimensi terakhir, lalu lakukan transpose:
# `.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)`, seperti di buku.
#
# ## torch.cat tanpa dim=-1
#
# `MultiHeadAttentionWrapper` menggabungkan semua head-nya dengan `torch.cat(..., dim=-1)`.
# Tanpa `dim=-1`, `torch.cat` menggabungkan sepanjang dimensi 0, yaitu dimensi batch. Setiap
# head mengembalikan `(b, num_tokens, d_out)` = `(2, 6, 2)`, sehingga dua head menjadi batch
# berisi empat urutan, masing-masing dengan dua fitur:

# %%
torch.manual_seed(123)
heads = [CausalAttention(3, 2, context_length=6, dropout=0.0) for _ in range(2)]
print(torch.cat([head(batch) for head in heads]).shape)  # the bug
# Out:
# torch.Size([4, 6, 2])

# %% [markdown]
# Baris ini tidak gagal. Error baru muncul kemudian, di layer pertama yang mengharapkan
# `2 * d_out = 4` fitur, jauh dari penyebabnya.
#
# **Perbaikan:** `torch.cat([head(x) for head in self.heads], dim=-1)`, yang meletakkan semua
# head berdampingan sepanjang dimensi fitur:

# %%
print(torch.cat([head(batch) for head in heads], dim=-1).shape)
# Out:
# torch.Size([2, 6, 4])

# %% [markdown]
# ## d_out: per head atau untuk semua head
#
# Kedua kelas multi-head memaknai `d_out` secara berbeda. Di `MultiHeadAttentionWrapper`,
# `d_out` adalah ukuran **setiap** head, dan semua head digabungkan, sehingga output memiliki
# `num_heads * d_out` fitur. Di `MultiHeadAttention`, `d_out` adalah ukuran **seluruh** output,
# yang dibagi menjadi beberapa head berukuran `head_dim = d_out // num_heads`. Karena itu,
# argumen yang sama menghasilkan lebar output yang berbeda:

# %%
wrapper = MultiHeadAttentionWrapper(3, 2, context_length=6, dropout=0.0, num_heads=2)
mha = MultiHeadAttention(3, 2, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttentionWrapper:", wrapper(batch).shape)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttentionWrapper: torch.Size([2, 6, 4])
# MultiHeadAttention:        torch.Size([2, 6, 2]) head_dim: 1

# %% [markdown]
# **Perbaikan:** untuk mendapatkan `k` fitur output dari `h` head, berikan `d_out = k / h` kepada
# `MultiHeadAttentionWrapper` dan `d_out = k` kepada `MultiHeadAttention`. Agar lebarnya sama
# dengan lebar wrapper di atas, yaitu 4, `MultiHeadAttention` memerlukan `d_out=4`; dengan begitu
# keduanya memiliki dua head yang masing-masing berisi dua fitur. ([Latihan 3.2](exercises.py)
# menempuh arah sebaliknya: `d_out=1` membuat lebar wrapper menjadi 2.)

# %%
mha = MultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2)
print("MultiHeadAttention:       ", mha(batch).shape, "head_dim:", mha.head_dim)
# Out:
# MultiHeadAttention:        torch.Size([2, 6, 4]) head_dim: 2

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
# **Perbaikan:** akses dengan indeks, `query.shape[-1]`, atau panggil method `query.size(-1)`.

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
# menandai posisi yang **dipertahankan**. Jika keep mask (mask yang menandai posisi yang
# dipertahankan) dipakai di tempat yang seharusnya diisi hide mask (mask yang menandai posisi
# yang disembunyikan), tidak ada yang gagal: model begitu saja memperhatikan masa depan dan
# mengabaikan masa lalu.

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
# posisi yang **dipertahankan**, sehingga kekeliruan yang sama juga terjadi di sana dengan arah
# terbalik, seperti yang ditunjukkan jebakan berikutnya. Sebaliknya,
# `torch.nn.MultiheadAttention` menerima mask boolean yang menandai posisi yang
# **disembunyikan**. Bentuk fungsional dari paket ini menamai argumennya `hide_mask` agar tidak
# bisa salah dibaca.)
#
# ## Mask versi buku pada scaled_dot_product_attention
#
# `torch.nn.functional.scaled_dot_product_attention` membaca `attn_mask` boolean sebagai
# "True = boleh diperhatikan". Jika diberi hide mask dari buku, hasilnya adalah bobot yang salah
# dari jebakan sebelumnya. Dengan matriks identitas sebagai key dan value serta `scale=1.0`,
# yang dikembalikan fungsi ini tidak lain adalah bobot perhatiannya (attention weights), sehingga
# bobot itu dapat dibandingkan dengan `right` dan `wrong` dari jebakan sebelumnya:

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
# Setiap token hanya memperhatikan token-token sesudahnya, dan token terakhir sama sekali tidak
# punya key yang tersisa. Pada jebakan sebelumnya, softmax membuat baris itu menjadi NaN; fungsi
# ini justru mengembalikan baris berisi nol, sehingga output token terakhir adalah vektor nol dan
# tidak ada tanda apa pun bahwa terjadi kesalahan.
#
# **Perbaikan:** balikkan nilai mask-nya, `attn_mask=~hide`, atau buang mask dan berikan
# `is_causal=True`:

# %%
fixed_mask = scaled_dot_product_attention(scores, eye, eye, attn_mask=~hide, scale=1.0)
fixed_causal = scaled_dot_product_attention(scores, eye, eye, is_causal=True, scale=1.0)
print("attn_mask=~hide equals `right`:", torch.allclose(fixed_mask, right))
print("is_causal=True equals `right`: ", torch.allclose(fixed_causal, right))
# Out:
# attn_mask=~hide equals `right`: True
# is_causal=True equals `right`:  True

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
# ## Penskalaan setelah softmax
#
# Skor dibagi dengan $\sqrt{d_k}$ **sebelum** softmax. Membagi bobotnya setelah softmax,
# `torch.softmax(attn_scores, dim=-1) / d_k**0.5`, berjalan tanpa keluhan, tetapi jumlah setiap
# baris tidak lagi 1. Berikut contohnya dengan bobot dari buku di bagian 3.4, dengan seed yang
# sama:

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
# Jumlah setiap baris adalah $1 / \sqrt{2} \approx 0.7071$, sehingga setiap vektor konteks
# (context vector) menjadi jumlah berbobot yang menyusut, bukan rata-rata berbobot. Selain itu,
# penskalaan tidak lagi menjalankan tugasnya: penskalaan ada untuk menjaga skor tetap kecil
# sebelum softmax, karena skor yang besar mendorong softmax ke arah satu nilai 1, dan pada
# keadaan itu gradiennya sangat kecil (lihat [bagian 3.4](03-trainable-self-attention.py)).
# Membagi sesudahnya tidak bisa memperbaiki hal itu: jika dikalikan kembali dengan $\sqrt{2}$,
# baris yang salah adalah softmax dari skor yang tidak diskalakan, yang lebih tajam daripada
# baris yang benar: bobot terbesarnya 0.2507, bukan 0.2264.
#
# **Perbaikan:** `torch.softmax(attn_scores / d_k**0.5, dim=-1)`, seperti yang ditulis di buku.
#
# ## Dropout sebelum softmax
#
# Dropout seharusnya diterapkan pada **bobot** perhatian, setelah softmax. Jika diterapkan pada
# skor sebelum softmax, skor yang terkena dropout menjadi 0, dan skor 0 tidak tersembunyi:
# softmax tetap memberinya bobot $e^0 / \sum_j e^{s_j}$, seperti skor lainnya. Hanya $-\infty$
# yang dapat menyembunyikan sebuah posisi. Di sini skor dari buku untuk "journey" dikenai pola
# dropout dengan $p = 0.5$, sekali sebelum dan sekali setelah softmax. (`nn.Dropout` membuat
# polanya sendiri secara acak; pola yang diambil dari generator dengan seed tetap membuat
# angka-angka di halaman ini sama di setiap platform.)

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
# Jika dropout diterapkan sebelum softmax, setiap token yang terkena dropout tetap mendapat
# bobot, dan jumlah bobotnya tetap 1, sehingga dropout tidak lagi memutus koneksi; dropout hanya
# menggeser bobot ke token yang bertahan, yang skornya dilipatduakan. Jika diterapkan setelah
# softmax, bobot yang terkena dropout tepat 0 dan bobot yang bertahan dilipatduakan, sehingga
# jumlahnya 1 hanya secara rata-rata, seperti yang dijelaskan
# [bagian 3.5.2](04-causal-attention.py).
#
# **Perbaikan:** `attn_weights = self.dropout(torch.softmax(...))`, setelah softmax.
#
# ## Membagi nilai yang bertahan dari dropout dengan p
#
# Dropout mengalikan nilai yang bertahan dengan $1 / (1 - p)$, sehingga secara rata-rata setiap
# nilai mempertahankan besarnya. Dropout yang ditulis sendiri dan membagi dengan $p$ tampak
# benar dengan $p = 0.5$ dari buku, karena $1 / p$ dan $1 / (1 - p)$ sama-sama bernilai 2.
# Dengan $p = 0.25$ tidak demikian: setiap nilai bertahan dengan peluang 0.75 lalu dikalikan 4,
# sehingga secara rata-rata nilainya menjadi tiga kali lipat. Rata-rata dari sejuta salinan
# sebuah baris yang dikenai dropout memperlihatkannya:


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
# `nn.Dropout` menjaga nilai harapan (expectation): rata-ratanya adalah baris itu sendiri.
# (Dengan sejuta salinan, galat acak setiap rata-rata kurang dari seperseribu, jauh lebih kecil
# daripada dua desimal yang dicetak.)
#
# **Perbaikan:** `x * keep / (1 - p)`, atau gunakan `nn.Dropout(p)`. Dengan pola yang sama
# seperti di atas:

# %%
keep = torch.rand(copies.shape, generator=torch.Generator().manual_seed(123)) >= 0.25
print("divided by 1 - p:", (copies * keep / (1 - 0.25)).mean(dim=0).round(decimals=2))
# Out:
# divided by 1 - p: tensor([0.2000, 0.3000, 0.5000])

# %% [markdown]
# ## Token lebih banyak daripada context_length
#
# Ukuran mask disesuaikan dengan `context_length` token. Kelas di buku memotongnya dengan
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
# Paket ini memeriksa input terlebih dahulu dan menjelaskan apa yang salah serta apa yang harus
# dilakukan:

# %% tags=["raises-exception"] raises="ValueError: x has 7 tokens, more than context_length=6"
CausalAttention(3, 2, context_length=6, dropout=0.0)(seven_tokens)

# %% [markdown]
# ## Token lebih sedikit daripada context_length
#
# Token yang lebih sedikit diperbolehkan, dan yang membuatnya berfungsi adalah potongan
# `[:num_tokens, :num_tokens]`. Jika potongan itu dihilangkan, seluruh mask berukuran
# `(context_length, context_length)` diterapkan pada skor. Dengan tepat `context_length` token
# ukurannya cocok, sehingga kelas itu lolos uji dengan enam token dari buku; input apa pun yang
# lebih pendek, misalnya prompt pendek ketika model menghasilkan teks, akan gagal. Pesan
# error-nya sama dengan pesan pada jebakan sebelumnya, tetapi ukurannya terbalik: di sana input
# terlalu panjang untuk mask, di sini mask terlalu besar untuk input, dan skor (tensor a) lebih
# kecil daripada mask (tensor b).


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
# **Perbaikan:** potong mask sesuai input, `self.mask.bool()[:num_tokens, :num_tokens]`, dengan
# `num_tokens = x.shape[1]`, seperti yang dilakukan kelas buku di atas:

# %%
print("4 tokens:", BookCausalScores(3, 2, context_length=6)(batch[:, :4]).shape)
# Out:
# 4 tokens: torch.Size([2, 4, 4])
