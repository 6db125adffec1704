# %% [markdown] english="9d543dbd2367"
# # Self-attention yang disederhanakan
#
# Bagian 3.3 buku: memperhatikan bagian-bagian input yang berbeda dengan self-attention,
# pertama-tama tanpa bobot yang dapat dilatih (trainable weights) sama sekali, sehingga setiap
# angka dapat diikuti dengan tangan.
#
# Tujuan self-attention adalah menghitung, untuk setiap token $x^{(i)}$, sebuah **vektor
# konteks (context vector)** $z^{(i)}$: campuran dari semua vektor input, diberi bobot sesuai
# seberapa relevan masing-masing terhadap token $i$. Kita membangunnya dalam tiga langkah:
#
# 1. **skor perhatian (attention scores)** $\omega_{ij}$: seberapa mirip token $j$ dengan
#    token $i$;
# 2. **bobot perhatian (attention weights)** $\alpha_{ij}$: skor yang dinormalisasi sehingga
#    setiap baris berjumlah 1;
# 3. **vektor konteks** $z^{(i)} = \sum_j \alpha_{ij} x^{(j)}$.

# %%
import torch

from attention_mechanisms import (
    attention_scores,
    attention_scores_loop,
    attention_weights,
    context_vector,
    context_vectors,
    query_scores_loop,
    softmax_stable,
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

# %% [markdown]
# ## 3.3.1 Mekanisme self-attention sederhana tanpa bobot yang dapat dilatih
#
# Ambil token kedua, "journey", sebagai **query**. Skor perhatiannya terhadap setiap token
# $x^{(j)}$ adalah perkalian titik (dot product) $\omega_{2j} = x^{(2)} \cdot x^{(j)}$: jumlah
# hasil kali elemen demi elemen. Perkalian titik bernilai besar ketika dua vektor menunjuk ke
# arah yang mirip, sehingga ia bisa dipakai sebagai ukuran kemiripan.

# %%
query = inputs[1]  # "journey", x^(2)

attn_scores_2 = torch.empty(inputs.shape[0])
for j, x_j in enumerate(inputs):
    attn_scores_2[j] = torch.dot(query, x_j)  # omega_2j
print(attn_scores_2)
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# [`query_scores_loop`][attention_mechanisms.simple.query_scores_loop] dari paket ini adalah
# loop yang sama, dan memberikan angka yang sama:

# %%
print(query_scores_loop(query, inputs))
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# "journey" mendapat skor tertinggi dengan dirinya sendiri (1.4950) dan dengan "starts"
# (1.4754), yang embedding-nya hampir sama.
#
# Skor-skor ini tidak dijamin berjumlah nilai tertentu. Gagasan pertama untuk mengubahnya menjadi
# bobot adalah membaginya dengan jumlahnya:

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
print("Attention weights:", attn_weights_2_tmp)
print("Sum:", attn_weights_2_tmp.sum())
# Out:
# Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
# Sum: tensor(1.0000)

# %% [markdown]
# Hasilnya berjumlah 1, tetapi cara ini akan mengubah skor negatif menjadi bobot negatif.
# Sebagai gantinya, fungsi **softmax** adalah pilihan standar:
#
# $$
# \alpha_{2j} = \operatorname{softmax}(\omega_2)_j = \frac{e^{\omega_{2j}}}{\sum_k e^{\omega_{2k}}}
# $$
#
# Setiap bobot bernilai positif, jumlahnya 1, dan skor yang lebih besar mendapat porsi bobot
# yang lebih besar secara tidak proporsional. Jika ditulis persis seperti rumusnya, cukup satu
# baris:


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


attn_weights_2_naive = softmax_naive(attn_scores_2)
print("Attention weights:", attn_weights_2_naive)
print("Sum:", attn_weights_2_naive.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# ### Di mana softmax naif gagal
#
# $e^x$ tumbuh dengan cepat. Dalam float32, bilangan terbesar sekitar $3.4 \times 10^{38}$, dan
# $e^{89}$ sudah lebih besar dari itu. Akibatnya pembilang dan penyebut sama-sama tak hingga,
# dan $\infty / \infty$ adalah "not a number" (NaN):

# %%
big_scores = torch.tensor([100.0, 1.0, 0.0])
print("naive: ", softmax_naive(big_scores))
print("stable:", softmax_stable(big_scores))
print("torch: ", torch.softmax(big_scores, dim=0))
# Out:
# naive:  tensor([nan, 0., 0.])
# stable: tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])
# torch:  tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])

# %% [markdown]
# Versi yang stabil mengurangkan skor terbesar $m$ sebelum mengambil eksponen. Faktor $e^{-m}$
# saling meniadakan antara pembilang dan penyebut, sehingga hasilnya tidak berubah, tetapi
# sekarang setiap eksponen paling besar 0:
#
# $$
# \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k
# $$
#
# `torch.softmax` melakukan hal ini di dalamnya, begitu pula
# [`softmax_stable`][attention_mechanisms.simple.softmax_stable] dan semua bagian lain dari
# paket ini. Gunakan `torch.softmax` dalam kode Anda sendiri:

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
print("Attention weights:", attn_weights_2)
print("Sum:", attn_weights_2.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# Langkah terakhir mengalikan setiap vektor input dengan bobotnya lalu menjumlahkan semuanya:
# $z^{(2)} = \sum_j \alpha_{2j} x^{(j)}$.

# %%
context_vec_2 = torch.zeros(query.shape)
for j, x_j in enumerate(inputs):
    context_vec_2 += attn_weights_2[j] * x_j
print(context_vec_2)
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# [`context_vector`][attention_mechanisms.simple.context_vector] membungkus loop tersebut:

# %%
print(context_vector(attn_weights_2, inputs))
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# ## 3.3.2 Menghitung bobot perhatian untuk semua token input
#
# Sekarang setiap token bergiliran menjadi query. Dengan dua loop, skor-skornya membentuk
# matriks $6 \times 6$ yang baris ke-$i$-nya berisi skor query $i$:

# %%
attn_scores = torch.empty(6, 6)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores[i, j] = torch.dot(x_i, x_j)
print(attn_scores)
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])

# %% [markdown]
# Entri $(i, j)$ adalah perkalian titik baris $i$ dengan baris $j$, dan itulah tepatnya yang
# dihitung oleh perkalian matriks $X X^\top$, dalam satu pemanggilan dan jauh lebih cepat:

# %%
attn_scores = inputs @ inputs.T
print(attn_scores)
print(torch.allclose(attn_scores, attention_scores_loop(inputs)))
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])
# True

# %% [markdown]
# Softmax di sepanjang setiap baris (`dim=-1`, dimensi terakhir) mengubah skor menjadi bobot;
# setiap baris berjumlah 1:

# %%
attn_weights = torch.softmax(attn_scores, dim=-1)
print(attn_weights)
print("row sums:", attn_weights.sum(dim=-1))
# Out:
# tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
#         [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
#         [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
#         [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
#         [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
#         [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
# row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])

# %% [markdown]
# Gambar berikut menunjukkan matriks yang sama. Setiap baris adalah satu query; sel yang lebih
# gelap adalah token yang paling banyak diambil informasinya oleh query tersebut.

# %% caption="Gambar 1. Bobot perhatian self-attention yang disederhanakan (tanpa bobot yang dapat dilatih)." alt="Peta panas (heatmap) matriks bobot perhatian berukuran 6 kali 6 antara token Your, journey, starts, with, one, step. Setiap baris berjumlah 1. Bobotnya tersebar cukup merata, antara 0.10 dan 0.24; journey dan starts paling banyak memperhatikan satu sama lain dan dirinya sendiri, masing-masing sekitar 0.23."
show_attention(
    attn_weights,
    tokens,
    caption="Figure 1. Attention weights of simplified self-attention (no trainable weights).",
    alt=(
        "Heatmap of a 6 by 6 matrix of attention weights between the tokens Your, journey, "
        "starts, with, one, step. Every row sums to 1. Weights are spread fairly evenly, "
        "between 0.10 and 0.24; journey and starts attend most to each other and to "
        "themselves, about 0.23 each."
    ),
)
# Out:
# AttentionFigure('Figure 1. Attention weights of simplified self-attention (no trainable weights).')

# %% [markdown]
# Terakhir, semua vektor konteks sekaligus: baris $i$ dari $A X$ adalah
# $\sum_j \alpha_{ij} x^{(j)}$, yaitu loop di atas untuk query $i$.

# %%
all_context_vecs = attn_weights @ inputs
print(all_context_vecs)
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# Baris kedua, $z^{(2)}$, adalah vektor konteks yang kita hitung dengan loop di 3.3.1. Paket ini
# memberikan matriks yang sama, baik langkah demi langkah maupun dalam satu pemanggilan:

# %%
print(context_vectors(attention_weights(attention_scores(inputs)), inputs))
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# Tidak ada yang dipelajari di sini: bobotnya langsung berasal dari embedding. Halaman
# berikutnya memberi model tiga matriks yang dapat dilatih, sehingga model dapat belajar *apa*
# yang perlu diperhatikan.
