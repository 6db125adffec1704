# %% [markdown] english="385dd517340f"
# # Latihan
#
# Tiga latihan dari bab 3. Cobalah setiap latihan sebelum Anda membuka solusinya; setiap solusi
# di bawah ini dieksekusi ketika halaman ini dibangun.

# %%
import torch

from attention_mechanisms import (
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
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
# ## Latihan 3.1: Membandingkan SelfAttention_v1 dan SelfAttention_v2
#
# `nn.Linear` di `SelfAttention_v2` memakai inisialisasi bobot yang berbeda dari `torch.rand`
# di `SelfAttention_v1`, sehingga keduanya mencetak output yang berbeda untuk input yang sama.
# Tunjukkan bahwa keduanya tetap merupakan fungsi yang sama: berikan bobot sebuah
# `SelfAttention_v2` kepada sebuah `SelfAttention_v1` lalu bandingkan output-outputnya.
#
# *Petunjuk:* `nn.Linear` menyimpan matriks bobotnya dalam keadaan tertranspos.

# %% tags=["solution"]
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in=3, d_out=2)
sa_v2 = SelfAttention_v2(d_in=3, d_out=2)

with torch.no_grad():
    # nn.Linear keeps a (d_out, d_in) weight and computes x @ weight.T
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)

print(sa_v1(inputs))
print(sa_v2(inputs))
print("same outputs:", torch.allclose(sa_v1(inputs), sa_v2(inputs)))
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
# same outputs: True

# %% [markdown]
# ## Latihan 3.2: Mengembalikan vektor embedding dua dimensi
#
# Ubah argumen-argumen `MultiHeadAttentionWrapper(..., num_heads=2)` sehingga vektor konteks
# (context vectors) yang dihasilkan berdimensi 2, bukan 4, dengan tetap memakai
# `num_heads=2`.
#
# *Petunjuk:* Anda tidak perlu mengubah kelasnya.

# %% tags=["solution"]
# The output size is d_out * num_heads, so two heads of size 1 give 2 features.
torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in=3, d_out=1, context_length=6, dropout=0.0, num_heads=2)
context_vecs = mha(batch)
print(context_vecs.shape)
# Out:
# torch.Size([2, 6, 2])

# %% [markdown]
# ## Latihan 3.3: Menginisialisasi modul attention berukuran GPT-2
#
# Dengan `MultiHeadAttention`, buatlah sebuah modul dengan ukuran model GPT-2 terkecil:
# 12 head, embedding input dan output berdimensi 768, dan panjang konteks (context length)
# 1024 token. Berapa banyak parameter yang dimilikinya?

# %% tags=["solution"]
gpt2_mha = MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12)
num_params = sum(p.numel() for p in gpt2_mha.parameters())
print(f"{num_params:,} parameters")

x = torch.randn(1, 1024, 768)  # one full-length sequence
print(gpt2_mha(x).shape)
# Out:
# 2,360,064 parameters
# torch.Size([1, 1024, 768])

# %% [markdown] tags=["solution"]
# Ketiga proyeksi masing-masing memiliki $768 \times 768$ bobot dan tanpa bias
# (`qkv_bias=False`), dan `out_proj` memiliki $768 \times 768$ bobot ditambah 768 bias:
# $4 \times 768^2 + 768 = 2{,}360{,}064$. Buffer `mask` ($1024 \times 1024$) bukanlah
# parameter. GPT-2 sendiri memakai `qkv_bias=True`, yang menambahkan $3 \times 768$ parameter
# lagi.
