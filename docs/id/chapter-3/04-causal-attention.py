# %% [markdown] english="fe5bdc3dcb52"
# # Causal attention
#
# Bagian 3.5 buku: menyembunyikan kata-kata di masa depan. Model bahasa dilatih untuk
# memprediksi setiap token berikutnya dari token-token sebelumnya. Jika selama pelatihan posisi
# $t$ dapat memperhatikan posisi-posisi sesudah $t$, model cukup menyalin jawabannya. **Causal
# attention** (disebut juga masked attention) membuat setiap token hanya dapat memperhatikan
# dirinya sendiri dan token-token sebelumnya.

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
# ## 3.5.1 Menerapkan mask causal attention
#
# Kita memakai ulang `SelfAttention_v2` dari halaman sebelumnya (seed 789) dan menghitung
# bobot perhatiannya (attention weights) seperti sebelumnya:

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
# ### Cara pertama: nolkan masa depan, lalu normalisasi ulang
#
# Semua yang berada di atas diagonal adalah query yang melihat token yang datang lebih
# kemudian. Matriks segitiga bawah berisi angka satu (`torch.tril`) menandai apa yang boleh
# tetap ada:

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
# Baris-barisnya tidak lagi berjumlah 1, jadi setiap baris dibagi dengan jumlahnya yang baru:

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
# ### Cara kedua: $-\infty$ sebelum softmax
#
# Softmax memetakan $-\infty$ tepat ke 0 ($e^{-\infty} = 0$), dan bobot yang tersisa
# dinormalisasi di antara mereka sendiri. Jadi, mengisi **skor** masa depan dengan $-\infty$
# menghasilkan bobot kausal dalam satu kali softmax:
#
# $$
# \alpha_{ij} = \operatorname{softmax}\left(\frac{\omega_i}{\sqrt{d_k}} + m_i\right)_j,
# \qquad m_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}
# $$
#
# Kali ini mask menandai apa yang harus **disembunyikan**: angka satu *di atas* diagonal, dari
# `torch.triu` dengan `diagonal=1`. (Tertukar antara kedua konvensi ini adalah bug klasik;
# lihat [Jebakan umum](pitfalls.py).)

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
# Kedua cara memberikan hasil yang sama, hingga pembulatan. Menormalisasi ulang setelah
# softmax secara matematis sama dengan mengeluarkan entri yang disembunyikan dari softmax,
# karena faktor bersama $\sum_k e^{\omega_{ik} / \sqrt{d_k}}$, termasuk penskalaannya, saling
# meniadakan:

# %%
print("same weights:", torch.allclose(attn_weights, masked_simple_norm))
# Out:
# same weights: True

# %% [markdown]
# [`causal_mask`][attention_mechanisms.functional.causal_mask] dari paket ini membangun mask
# sembunyikan (hide mask) yang sama sebagai tensor boolean:

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

# %% caption="Gambar 3. Bobot causal attention: setiap entri di atas diagonal bernilai nol." alt="Peta panas (heatmap) bobot causal attention 6 kali 6. Segitiga atasnya seluruhnya nol. Your hanya memperhatikan dirinya sendiri dengan bobot 1.00; journey membagi 0.55 dan 0.45 antara Your dan dirinya sendiri; baris terakhir, step, tersebar antara 0.15 dan 0.19 ke keenam token."
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
# Baris pertama sekarang $[1, 0, 0, 0, 0, 0]$: token pertama tidak punya apa pun sebelumnya,
# sehingga ia hanya dapat memperhatikan dirinya sendiri.
#
# ## 3.5.2 Menyembunyikan bobot perhatian tambahan dengan dropout
#
# **Dropout** menolkan nilai-nilai yang dipilih secara acak selama pelatihan, sehingga model
# tidak bisa bergantung pada satu nilai tertentu; dropout dimatikan saat inferensi. Dalam
# attention, dropout diterapkan pada bobot perhatian. Dengan laju dropout (dropout rate) $p$,
# setiap nilai dinolkan dengan peluang $p$, dan nilai yang bertahan dikalikan dengan
# $1 / (1 - p)$, sehingga secara rata-rata setiap bobot mempertahankan besarnya:
#
# $$
# \mathbb{E}[\text{dropout}(a)] = (1 - p) \cdot \frac{a}{1 - p} + p \cdot 0 = a
# $$
#
# Dengan $p = 0.5$, nilai yang bertahan menjadi dua kali lipat. Berikut contohnya pada matriks
# berisi angka satu:

# %% nondeterministic="which entries dropout zeroes depends on the PyTorch version and platform; the next cell checks the rule instead"
torch.manual_seed(123)
dropout = torch.nn.Dropout(0.5)
example = torch.ones(6, 6)
dropped = dropout(example)
print(dropped)

# %% [markdown]
# > **Pola Anda mungkin berbeda.** Entri mana yang dinolkan bergantung pada cara versi PyTorch
# > dan platform Anda menghasilkan angka acak, sehingga hasil cetak di buku dan milik Anda bisa
# > menunjukkan pola yang berbeda meskipun seed-nya sama. Yang harus berlaku di mana pun adalah
# > aturannya: setiap entri bernilai 0 atau $1 / (1 - p) = 2$,
# > dan kira-kira separuhnya bernilai 0.

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
# Jika diterapkan pada bobot kausal, dropout menghapus sebagian koneksi; bobot yang tersisa
# dilipatduakan, sehingga baris-barisnya tidak lagi berjumlah 1, tetapi secara rata-rata
# jumlahnya tetap.

# %% nondeterministic="a dropout pattern again: it depends on the PyTorch version and platform"
torch.manual_seed(123)
dropped_weights = dropout(attn_weights)
print(dropped_weights)

# %% caption="Gambar 4. Bobot kausal setelah dropout dengan p = 0.5 (nilai yang bertahan dilipatduakan)." alt="Peta panas (heatmap) bobot causal attention setelah dropout dengan laju 0.5. Selain nol di atas diagonal, dropout telah menolkan sebagian entri lainnya secara acak, dan setiap bobot yang bertahan bernilai dua kali nilainya di Gambar 3."
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
# ## 3.5.3 Mengimplementasikan kelas causal attention yang ringkas
#
# Input sungguhan datang dalam bentuk batch. Menumpuk kalimat tadi dua kali menghasilkan batch
# berbentuk `(batch, num_tokens, d_in)`:

# %%
batch = torch.stack((inputs, inputs), dim=0)
print(batch.shape)
# Out:
# torch.Size([2, 6, 3])

# %% [markdown]
# [`CausalAttention`][attention_mechanisms.causal.CausalAttention] menggabungkan semua yang ada
# di halaman ini: proyeksi `nn.Linear`, mask $-\infty$, penskalaan, softmax, dan dropout pada
# bobot. Berikut kelas tersebut sebagaimana dirilis dalam paket; sel ini mendefinisikannya di
# notebook ini (sel pertama mengimpor apa yang dibutuhkannya), sehingga Anda dapat mengubahnya
# lalu menjalankan kembali sel-sel sesudahnya:

# %% include="attention_mechanisms.causal.CausalAttention"

# %% [markdown]
# Baris demi baris, dibandingkan dengan langkah-langkah di atas:
#
# - `__init__` membuat ketiga proyeksi dengan urutan query, key, value, lalu
#   `self.dropout = nn.Dropout(...)`, dan mendaftarkan mask
#   `torch.triu(torch.ones(context_length, context_length), diagonal=1)` sebagai buffer (lihat
#   di bawah). `context_length` adalah urutan terpanjang yang akan pernah dilihat modul ini.
# - `forward` memeriksa `x` dan membaca `num_tokens`; ini adalah `b, num_tokens, d_in = x.shape`
#   dari buku, ditulis sedemikian rupa sehingga satu urutan `(T, d_in)` juga dapat diproses.
# - `keys`, `queries`, `values`: ketiga proyeksi.
# - `attn_scores = queries @ keys.transpose(-2, -1)`: `transpose(1, 2)` dari buku untuk sebuah
#   batch, yang menukar dimensi token dan dimensi fitur dari setiap urutan.
# - `attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)`: sudut
#   kiri atas dari mask, untuk input yang lebih pendek daripada `context_length`; akhiran `_`
#   berarti pengisian dilakukan di tempat (in place). Diagonalnya tidak pernah disembunyikan,
#   sehingga tidak ada baris yang seluruhnya $-\infty$.
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`, lalu
#   `attn_weights = self.dropout(attn_weights)`, yang menolkan bobot hanya dalam mode pelatihan.
# - `context_vec = attn_weights @ values`: `(b, num_tokens, d_out)`.
#
# Pada batch ini, dengan `dropout=0.0`, kedua salinan kalimat menghasilkan vektor konteks
# (context vectors) yang sama, dan baris token pertama hanya bergantung pada token pertama:

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
# ### Mengapa mask disimpan sebagai buffer
#
# Kelas ini menyimpan mask-nya dengan `self.register_buffer("mask", ...)`, bukan sebagai
# atribut biasa `self.mask = ...`. Buffer adalah bagian dari state modul tanpa menjadi
# parameter yang dapat dilatih, dan hal itu punya dua akibat:
#
# 1. **Buffer ikut berpindah bersama modul.** `model.to("cuda")` atau
#    `model.to(torch.float64)` memindahkan parameter *dan* buffer; atribut biasa akan
#    tertinggal di CPU, dan forward pass pertama di GPU akan gagal karena perangkatnya tidak
#    cocok (device mismatch).
# 2. **Buffer ikut disimpan dan dimuat.** `state_dict()` mencakup buffer, sehingga sebuah
#    checkpoint membawa mask tersebut.
#
# Keduanya mudah dilihat tanpa GPU:

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
# Halaman [Jebakan umum](pitfalls.py) menunjukkan apa yang salah jika memakai atribut biasa.
# Berikutnya, kita menjalankan beberapa head causal attention secara berdampingan:
# [multi-head attention](05-multi-head-attention.py).
