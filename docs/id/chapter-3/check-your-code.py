# %% [markdown] english="ef4cb891c302"
# # Periksa kode Anda
#
# Anda menulis sendiri `SelfAttention_v1`, `CausalAttention`, atau `MultiHeadAttention` sambil
# membaca bab ini, dan kode itu mencetak angka. Apakah angka-angka itu sama dengan yang ada di
# buku? `attention-check` menjawab pertanyaan itu untuk setiap kelas dan fungsi pembantu bab 3
# di notebook Anda, dan ketika ada yang berbeda, ia menjelaskan sebabnya dalam konteks kode Anda
# sendiri: atributnya, selnya, dan barisnya.
#
# ```bash
# attention-check my_notebook.ipynb          # a notebook, or a .py file
# attention-check my_notebook.ipynb --json   # the same report as one JSON object
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# Alat ini disertakan dalam paket (`pip install attention-mechanisms`). File Anda tidak pernah
# diubah. Sel-sel kodenya dijalankan dalam proses Python terpisah, berurutan, seperti di
# Jupyter, dengan batas waktu 30 detik per sel (`--timeout`) dan 120 detik secara keseluruhan.
# Sel yang gagal atau kehabisan waktu akan dilaporkan, dan proses berlanjut ke sel berikutnya.
# Baris-baris IPython (`%time`, `!pip`) dilewati, dan apa yang dicetak kode Anda tidak
# ditampilkan.
#
# ## Apa yang diperiksa
#
# Alat ini menemukan kelas-kelas Anda berdasarkan nama (`SelfAttention_v2`, `MHA`,
# `causal_attention`...), lalu berdasarkan parameternya, baik yang dinamai seperti di buku
# maupun seperti yang Anda namai (`dim_in`, `embedding_dim`, `head_count`). Ia membangun setiap
# kelas dengan argumen dari buku, menjalankannya pada enam token dari buku, lalu menyalin
# bobotnya ke kelas paket yang berperan sama, sesuai urutan Anda membuatnya (query, key, value,
# lalu proyeksi output), untuk membandingkan output-outputnya.
#
# | pemeriksaan | lolos jika |
# | --- | --- |
# | `constructs` | kelas dapat dibangun dengan argumen dari buku |
# | `runs` | kelas berjalan pada input dari buku (satu urutan untuk v1 dan v2, batch berisi dua untuk yang lain) |
# | `shape` | output memiliki bentuk seperti di buku |
# | `matches_book` | dengan bobot yang sama, output sama dengan output buku hingga 1e-5 |
# | `scale` | skor perhatian dibagi dengan akar kuadrat dari dimensi key |
# | `softmax_dim` | bobot perhatian dinormalisasi terhadap key |
# | `causal` | tidak ada output yang bergantung pada token yang datang kemudian |
# | `diagonal` | setiap token melihat dirinya sendiri |
# | `mask_buffer` | mask adalah buffer yang terdaftar |
# | `dropout` | dropout bekerja pada bobot perhatian; mode eval bersifat deterministik |
# | `heads` | setiap head adalah single-head attention dengan potongan bobotnya sendiri |
# | `out_proj` | proyeksi output diterapkan |
#
# Ketika output berbeda, pemeriksa menghitung ulang hasil buku dengan mengubah satu hal setiap
# kali (tanpa penskalaan, softmax pada dimensi yang lain, tanpa mask...). Perubahan yang
# menghasilkan kembali output Anda menunjukkan pemeriksaan mana yang gagal.
#
# ## Notebook seorang pembelajar
#
# Notebook ini ditulis oleh seorang pembelajar yang membaca bab ini dalam bahasa Mandarin.
# Notebook tersebut mendefinisikan sebuah fungsi attention dan sebuah kelas multi-head, dengan
# bug yang dibuat oleh banyak pembaca. Repositori ini menyimpannya di `tests/fixtures/check/`.
# Berikut laporan yang didapatnya, dibuat ketika halaman ini dibangun:

# %% tags=["wrap-output"]
import os

from attention_mechanisms.check.cli import main

os.chdir("../../../tests/fixtures/check")  # where the repository keeps the learners' notebooks
status = main(["zh-multihead-attention-buggy.ipynb"])
print("exit status:", status)
# Out:
# zh-multihead-attention-buggy.ipynb
#   cell 6: error: TypeError: 'torch.Size' object is not callable (cell 4, line 8)
#
# _attention (as attention_function)
#   FAIL  runs          torch.Size is not callable: shape(-1) should be shape[-1] (cell 4, line 8:
#                       'd_k = query.shape(-1)') (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#calling-xshape-1)
#   skip  shape         not checked: it does not run
#   skip  matches_book  not checked: it does not run
#   skip  causal        not run; its convention: mask keeps the lower triangle (a keep mask), so
#                       masked_fill must hide where it is 0, as it does here; the book's mask marks
#                       what to hide (triu, diagonal=1) (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#tril-or-triu-which-positions-does-the-mask-mark)
#
# MultiHeadAttention
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2)
#   FAIL  runs          torch.Size is not callable: shape(-1) should be shape[-1] (cell 4, line 8:
#                       'd_k = query.shape(-1)') (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#calling-xshape-1)
#   skip  shape         not checked: it does not run
#   skip  matches_book  not checked: it does not run
#   skip  scale         not checked: it does not run
#   skip  softmax_dim   not checked: it does not run
#   skip  causal        not run; its convention: mask keeps the lower triangle (a keep mask), so
#                       masked_fill must hide where it is 0, as it does here; the book's mask marks
#                       what to hide (triu, diagonal=1) (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#tril-or-triu-which-positions-does-the-mask-mark)
#   skip  diagonal      not checked: it does not run
#   skip  mask_buffer   not checked: it does not run
#   skip  dropout       not checked: it does not run
#   skip  heads         not checked: it does not run
#   skip  out_proj      not checked: it does not run
# exit status: 1

# %% [markdown]
# `shape(-1)` memanggil shape: `torch.Size` adalah tuple, sehingga ia diindeks, `shape[-1]`.
# Kedua komponen gagal berjalan karena satu baris itu, dan tidak ada yang sesudahnya yang bisa
# diperiksa. Laporan itu juga menyebutkan konvensi mask yang dipakai. `tril` menandai
# posisi-posisi yang dipertahankan, dan `masked_fill(mask == 0, ...)` menyembunyikan sisanya.
# Itu konsisten, jadi bukan kesalahan, tetapi kebalikan dari mask di buku, yang menandai
# posisi-posisi yang disembunyikan. Halaman [Jebakan umum](pitfalls.py) memuat kedua kesalahan
# tersebut.
#
# Perbaiki baris itu, jalankan pemeriksa lagi, dan semua pemeriksaan akan lolos. Status keluar
# (exit status) bernilai 0 jika setiap komponen lolos; 1 jika ada pemeriksaan yang gagal, jika
# pemeriksaan tidak selesai, atau jika sel-sel yang gagal tidak menyisakan apa pun untuk
# diperiksa; dan 2 jika file tidak dapat dibaca.
