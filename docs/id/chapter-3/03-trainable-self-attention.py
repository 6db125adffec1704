# %% [markdown] english="1d50d93593ef"
# # Self-attention dengan bobot yang dapat dilatih
#
# Bagian 3.4 buku: **scaled dot-product attention** yang dipakai di GPT dan sebagian besar
# transformer lainnya. Mekanisme ini menambahkan tiga matriks bobot (weight matrices) yang
# dipelajari model selama pelatihan: $W_q$, $W_k$, dan $W_v$.
#
# Setiap input $x^{(i)}$ diproyeksikan tiga kali:
#
# - **query**-nya $q^{(i)} = x^{(i)} W_q$: apa yang dicari oleh token ini;
# - **key**-nya $k^{(i)} = x^{(i)} W_k$: apa yang ditawarkan token ini agar dapat ditemukan;
# - **value**-nya $v^{(i)} = x^{(i)} W_v$: apa yang diteruskan token ini begitu ia diperhatikan.
#
# Sekarang skor perhatian (attention scores) membandingkan query dengan key,
# $\omega_{ij} = q^{(i)} \cdot k^{(j)}$, dan vektor konteks (context vectors) mencampur value,
# bukan input mentah.

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
# ## 3.4.1 Menghitung bobot perhatian langkah demi langkah
#
# Sekali lagi kita mengikuti token kedua, "journey". Ukuran input adalah 3; buku memilih ukuran
# output 2 agar angka-angkanya tetap sedikit (model GPT memakai ukuran yang sama untuk
# keduanya).

# %%
x_2 = inputs[1]
d_in = inputs.shape[1]  # 3
d_out = 2

torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)

# %% [markdown]
# `requires_grad=False` hanya agar hasil cetaknya tetap ringkas; model yang sedang dilatih
# membiarkannya aktif. Query, key, dan value dari "journey" adalah tiga proyeksi dari vektor
# yang sama:

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
# Untuk memberi skor "journey" terhadap setiap token, kita memerlukan key dari setiap token,
# dan nanti setiap value-nya. Masing-masing cukup satu perkalian matriks untuk memproyeksikan
# keenam token:

# %%
keys = inputs @ W_key  # (6, 2)
values = inputs @ W_value  # (6, 2)
print("keys.shape:  ", keys.shape)
print("values.shape:", values.shape)
# Out:
# keys.shape:   torch.Size([6, 2])
# values.shape: torch.Size([6, 2])

# %% [markdown]
# Skor "journey" terhadap dirinya sendiri adalah perkalian titik (dot product) antara query-nya
# dan key-nya sendiri, $\omega_{22} = q^{(2)} \cdot k^{(2)}$:

# %%
attn_score_22 = query_2.dot(keys[1])
print(attn_score_22)
# Out:
# tensor(1.8524)

# %% [markdown]
# dan keenam skor query 2 cukup dihitung dengan satu perkalian vektor-matriks,
# $\omega_2 = q^{(2)} K^\top$:

# %%
attn_scores_2 = query_2 @ keys.T
print(attn_scores_2)
# Out:
# tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])

# %% [markdown]
# ### Mengapa skornya diskalakan
#
# Sebelum softmax, skor dibagi dengan $\sqrt{d_k}$, akar kuadrat dari ukuran key:
#
# $$
# \alpha_{2j} = \operatorname{softmax}\left(\frac{\omega_2}{\sqrt{d_k}}\right)_j
# $$
#
# Perkalian titik dua vektor berdimensi $d_k$ menjumlahkan $d_k$ suku, sehingga sebarannya
# membesar seiring $d_k$. Skor yang besar mendorong softmax ke arah vektor one-hot, di mana
# gradiennya hampir nol dan pelatihan macet. Membagi dengan $\sqrt{d_k}$ membuat sebaran skor
# kurang lebih tidak bergantung pada ukuran tersebut, dan memberi metode ini namanya: *scaled*
# (diskalakan) dot-product attention.

# %%
d_k = keys.shape[-1]
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
print(attn_weights_2)
# Out:
# tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])

# %% [markdown]
# Terakhir, vektor konteks "journey" adalah jumlah berbobot dari value,
# $z^{(2)} = \sum_j \alpha_{2j} v^{(j)}$:

# %%
context_vec_2 = attn_weights_2 @ values
print(context_vec_2)
# Out:
# tensor([0.3061, 0.8210])

# %% [markdown]
# ## 3.4.2 Mengimplementasikan kelas Python self-attention yang ringkas
#
# Langkah-langkah di atas, untuk semua token sekaligus, membentuk sebuah kelas. Inilah
# [`SelfAttention_v1`][attention_mechanisms.self_attention.SelfAttention_v1] dari paket ini,
# persis seperti yang dirilis; sel ini mendefinisikannya di notebook ini, sehingga Anda dapat
# mengubahnya lalu menjalankan kembali sel-sel sesudahnya. Kelas ini menghitung
#
# $$
# Z = \operatorname{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,
# \qquad Q = X W_q,\; K = X W_k,\; V = X W_v
# $$

# %% include="attention_mechanisms.self_attention.SelfAttention_v1"

# %% [markdown]
# Baris demi baris:
#
# - `__init__` memeriksa bahwa kedua ukuran adalah int positif (`check_size`), lalu membuat
#   `W_query`, `W_key`, dan `W_value` sebagai `nn.Parameter(torch.rand(d_in, d_out))`, dengan
#   urutan itu: tiga pengambilan angka acak yang sama seperti di 3.4.1, sehingga seed yang
#   sama menghasilkan matriks yang sama. `nn.Parameter` mendaftarkan setiap matriks ke modul,
#   sehingga `parameters()` dan `state_dict()` dapat melihatnya.
# - `forward` pertama-tama memeriksa `x` (`check_tokens`): harus bertipe floating-point
#   `(T, d_in)`, atau sebuah batch `(b, T, d_in)`.
# - `keys = x @ self.W_key`, begitu juga query dan value: satu baris per token, bentuk matriks
#   dari `x_2 @ W_key`.
# - `attn_scores = queries @ keys.mT`: semua $\omega_{ij}$ sekaligus. `.mT` mentranspos dua
#   dimensi terakhir, yang untuk satu urutan sama dengan `keys.T` di buku.
# - `attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)`: diskalakan
#   dengan $\sqrt{d_k}$ dan dinormalisasi terhadap key, sehingga setiap baris berjumlah 1.
# - `context_vec = attn_weights @ values`: baris $i$ adalah $z^{(i)}$.
#
# Dengan seed yang sama seperti di 3.4.1, baris keduanya adalah vektor konteks yang kita
# hitung dengan tangan:

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
# [`SelfAttention_v2`][attention_mechanisms.self_attention.SelfAttention_v2] mengganti
# matriks buatan tangan itu dengan layer `nn.Linear`, tanpa bias kecuali `qkv_bias=True`:

# %% include="attention_mechanisms.self_attention.SelfAttention_v2"

# %% [markdown]
# Hanya dua hal yang berubah. Di `__init__`, setiap proyeksi adalah `nn.Linear(d_in, d_out)`,
# yang menghitung perkalian matriks yang sama, tetapi berangkat dari inisialisasi yang lebih
# baik daripada `torch.rand`, dan ini membantu pelatihan. Di `forward`, `self.W_key(x)`
# memanggil layer tersebut sebagai ganti `x @ self.W_key`. Sisanya, yaitu skor, penskalaan,
# softmax, dan jumlah berbobot, sama persis baris demi baris. Bobotnya adalah angka acak yang
# berbeda, sehingga outputnya pun berbeda:

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
# Inilah bobot perhatian (attention weights) di balik output tersebut, baris demi baris:

# %% caption="Gambar 2. Bobot perhatian SelfAttention_v2 setelah torch.manual_seed(789)." alt="Peta panas (heatmap) bobot perhatian 6 kali 6 dari SelfAttention_v2 dengan bobot acak yang belum dilatih. Semua bobot berada antara 0.15 dan 0.21, sehingga setiap token memperhatikan keenam token hampir sama rata; kolom untuk Your sedikit lebih gelap daripada kolom lainnya."
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
# Bobot yang belum dilatih menghasilkan attention yang hampir seragam: belum ada yang
# dipelajari tentang token mana yang penting bagi token mana.
#
# ### Menyalin bobot dari v2 ke v1
#
# Kedua kelas menghitung fungsi yang sama. `nn.Linear(d_in, d_out)` menyimpan bobotnya sebagai
# matriks `(d_out, d_in)` dan menghitung `x @ weight.T`, sehingga menyalin bobot v2 yang
# sudah **ditranspos** ke v1 pasti membuat output keduanya sama:

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
# Kedua kelas membiarkan setiap token melihat setiap token lain, termasuk token-token yang
# datang sesudahnya. Model yang menghasilkan teks satu token demi satu token tidak boleh
# melakukan itu; [halaman berikutnya](04-causal-attention.py) menyembunyikan masa depan.
