# %% [markdown] english="fac5074196f2"
# # Mengapa attention
#
# Bagian 3.1 dan 3.2 buku: masalah dalam memodelkan urutan (sequence) panjang, dan bagaimana
# mekanisme perhatian (attention) memungkinkan model menengok kembali setiap bagian dari
# inputnya.
#
# ## 3.1 Masalah dalam memodelkan urutan panjang
#
# Menerjemahkan kalimat kata demi kata tidak akan berhasil: setiap bahasa menyusun kata dengan
# urutan yang berbeda, dan terjemahan yang tepat untuk sebuah kata sering bergantung pada
# kata-kata yang letaknya jauh darinya. Model penerjemah harus membaca seluruh kalimat sebelum
# menulis apa pun.
#
# Sebelum ada transformer, rancangan yang lazim adalah **recurrent neural network (RNN)
# encoder-decoder**. Encoder membaca input satu token demi satu token dan menyimpan sebuah
# *hidden state* (keadaan tersembunyi), yaitu vektor yang diperbaruinya setelah setiap token.
# Ketika input berakhir, hidden state terakhir itu diserahkan kepada decoder, yang lalu
# menulis output satu token demi satu token berdasarkan vektor tersebut.
#
# Titik lemahnya ada pada serah terima itu: sepanjang apa pun inputnya, decoder hanya menerima
# satu vektor berukuran tetap. Mari kita lihat hal itu dengan sebuah RNN kecil dari PyTorch
# pada kalimat enam token kita.

# %%
import torch
from torch import nn

torch.manual_seed(123)

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
encoder = nn.RNN(input_size=3, hidden_size=4, batch_first=True)
all_states, last_state = encoder(inputs.unsqueeze(0))  # a batch of one sentence

print("one hidden state per input token:", all_states.shape)
print("what a classic decoder receives: ", last_state.shape)
# Out:
# one hidden state per input token: torch.Size([1, 6, 4])
# what a classic decoder receives:  torch.Size([1, 1, 4])

# %% [markdown]
# Encoder menghitung enam hidden state, satu setelah setiap token, tetapi decoder klasik hanya
# melihat yang terakhir: empat angka yang harus merangkum seluruh kalimat. Untuk kalimat
# sepanjang enam puluh token pun, tetap hanya empat angka. Informasi tentang token-token awal
# harus bertahan melewati setiap pembaruan sesudahnya, dan pada jarak yang jauh informasi itu
# memudar.

# %% [markdown]
# ## 3.2 Menangkap ketergantungan data dengan mekanisme attention
#
# Pada tahun 2014, Bahdanau, Cho, dan Bengio mengubah cara serah terima tersebut: pada setiap
# langkah output, decoder boleh melihat **semua** hidden state encoder dan menentukan seberapa
# penting masing-masing pada saat itu. Angka-angka "seberapa penting" itulah **bobot perhatian
# (attention weights)**: tidak negatif, satu untuk setiap posisi input, dan jumlahnya 1. Decoder
# lalu bekerja dengan rata-rata berbobot dari hidden state tersebut, yaitu sebuah **vektor
# konteks (context vector)** yang dibuat khusus untuk langkah ini.
#
# Berikut gagasan itu dalam beberapa baris kode, dengan hidden state decoder rekaan sebagai
# *query*. Kemiripan query dengan setiap hidden state encoder diukur dengan perkalian titik
# (dot product), dan softmax mengubah enam nilai kemiripan itu menjadi bobot.

# %%
decoder_state = torch.tensor([0.5, -0.2, 0.1, 0.3])  # what the decoder is "looking for"
states = all_states[0]  # (6, 4): one state per input token

scores = states @ decoder_state  # (6,): similarity of each state to the query
weights = torch.softmax(scores, dim=0)  # (6,): non-negative, sums to 1
context = weights @ states  # (4,): weighted average of the states

print("weights:", weights)
print("sum of weights:", weights.sum())
print("context vector shape:", context.shape)
# Out:
# weights: tensor([0.1619, 0.1547, 0.1675, 0.1780, 0.1690, 0.1688],
#        grad_fn=<SoftmaxBackward0>)
# sum of weights: tensor(1., grad_fn=<SumBackward0>)
# context vector shape: torch.Size([4])

# %% [markdown]
# Tiga tahun kemudian, *Attention Is All You Need* (Vaswani dkk., 2017) membuang rekurensi
# sama sekali. Dalam transformer, setiap token dari suatu urutan memperhatikan token-token dari
# urutan yang **sama**. Itulah **self-attention**, dan itulah yang dibangun di sepanjang sisa
# bab ini:
#
# - [Self-attention yang disederhanakan](02-simple-self-attention.py): skor, bobot, dan vektor
#   konteks tanpa bobot yang dapat dilatih sama sekali.
# - [Self-attention dengan bobot yang dapat dilatih](03-trainable-self-attention.py):
#   scaled dot-product attention yang dipakai di GPT.
# - [Causal attention](04-causal-attention.py): sebuah token hanya boleh melihat token-token
#   sebelumnya, dan inilah yang memungkinkan model menghasilkan teks satu token demi satu
#   token.
# - [Multi-head attention](05-multi-head-attention.py): beberapa mekanisme attention yang
#   berjalan berdampingan.
