# %% [markdown] english="1ed8242815c7"
# # Periksa kode Anda
#
# Sambil membaca bab ini, Anda menulis sendiri `SelfAttention_v1`, `CausalAttention`, atau
# `MultiHeadAttention`, dan kode itu mencetak angka. Apakah angka-angka itu sama dengan angka
# di buku? `attention-check` menjawab pertanyaan itu untuk setiap kelas dan fungsi pembantu
# bab 3 di notebook Anda. Jika ada yang berbeda, pemeriksa (checker) ini menjelaskan sebabnya
# dengan merujuk ke kode Anda sendiri: atributnya, selnya, dan barisnya.
#
# ```bash
# attention-check my_notebook.ipynb              # notebook, atau file .py
# attention-check my_notebook.ipynb --lang vi    # laporan dalam bahasa Vietnam (vi, zh, id, en)
# attention-check my_notebook.ipynb --json       # laporan yang sama sebagai satu objek JSON
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# Pemeriksa ini sudah termasuk dalam paket (`pip install attention-mechanisms`). File Anda
# tidak pernah diubah. Sel-sel kodenya dijalankan berurutan dalam proses Python terpisah,
# seperti di Jupyter, dengan batas waktu 30 detik per sel (`--timeout`) dan 120 detik secara
# keseluruhan, serta memori paling banyak 4 GiB (`--memory`). Sel yang gagal atau kehabisan
# waktu dilaporkan, lalu proses berlanjut ke sel berikutnya. Baris IPython (`%time`, `!pip`)
# dilewati, dan apa yang dicetak kode Anda tidak ditampilkan. Laporan ditulis dalam bahasa
# sistem Anda jika bahasa itu salah satu bahasa buku ini (bahasa lain dapat dipilih dengan
# `--lang`); nama pemeriksaan dan kunci JSON tetap dalam bahasa Inggris.
#
# ## Apa yang diperiksa
#
# Pemeriksa mencari kelas-kelas Anda berdasarkan nama (`SelfAttention_v2`, `MHA`,
# `causal_attention`...), lalu berdasarkan parameternya, baik yang dinamai seperti di buku
# maupun dengan nama pilihan Anda sendiri (`dim_in`, `embedding_dim`, `n_head`). Setiap kelas
# dibangun dengan argumen dari buku dan dijalankan pada enam token dari buku. Setelah itu,
# pemeriksa membaca bobot Anda sebagai proyeksi query, key, value, dan proyeksi output (output
# projection) versi buku, berdasarkan bentuk dan namanya. Bobot itu boleh berupa layer
# `nn.Linear`; matriks `nn.Parameter` yang Anda buat sendiri, disimpan dengan orientasi mana
# pun (`x @ W` atau `x @ W.T`); satu proyeksi gabungan (fused projection) berukuran
# `3 * d_out` yang dipecah dengan `chunk`, `split`, atau `view`, seperti yang ditulis di GPT-2
# dan nanoGPT; atau bobot di dalam `nn.MultiheadAttention`. Dengan bobot Anda, pemeriksa
# menghitung apa yang dihitung kelas versi buku, lalu membandingkan output-nya. Bagaimanapun
# Anda menulis bagian attention-nya (dengan cara buku, `einsum`,
# `scaled_dot_product_attention`, mask yang disimpan sebagai buffer atau dibuat di `forward`),
# kode yang benar akan lolos.
#
# Bentuk tensor yang dipakai di buku justru dapat menyembunyikan beberapa kesalahan: dengan
# `d_out=2` dan dua head, setiap head hanya punya satu kolom, dan dengan enam token serta
# `context_length=6`, ukuran mask selalu pas. Karena itu, setiap kelas juga dijalankan dengan
# batch berukuran 1 dan 3, dengan 4 token untuk `context_length` 6, dengan head berisi dua
# kolom, dan pada ukuran-ukuran lain. Jika kode berjalan pada bentuk versi buku tetapi gagal
# pada bentuk lain, laporan menyebutkan pada bentuk mana kode itu gagal dan mengapa.
#
# | pemeriksaan | lolos jika |
# | --- | --- |
# | `constructs` | kelas dapat dibangun dengan argumen dari buku, dan juga pada setiap ukuran lain |
# | `runs` | kelas berjalan pada setiap input (satu urutan untuk v1 dan v2, satu batch untuk yang lain) |
# | `shape` | output selalu memiliki bentuk seperti di buku |
# | `matches_book` | dengan bobot yang sama, output sama dengan output buku dengan toleransi 1e-5, pada setiap bentuk |
# | `scale` | skor perhatian (attention scores) dibagi dengan akar kuadrat dimensi key, sebelum softmax |
# | `softmax_dim` | bobot perhatian (attention weights) dinormalisasi terhadap key |
# | `causal` | tidak ada output yang bergantung pada token yang muncul sesudahnya |
# | `diagonal` | setiap token melihat dirinya sendiri |
# | `mask_buffer` | mask yang disimpan di dalam modul adalah buffer yang terdaftar (jika modul tidak menyimpan mask: tidak diperiksa) |
# | `dropout` | dropout bekerja pada bobot perhatian dan mengalikan nilai yang bertahan dengan 1/(1-p); dalam mode eval tidak ada dropout |
# | `heads` | setiap head adalah single-head attention dengan potongan bobotnya sendiri |
# | `out_proj` | proyeksi output diterapkan |
#
# Jika output berbeda, pemeriksa menghitung ulang hasil buku dengan mengubah satu hal setiap
# kali: tanpa penskalaan, atau penskalaan sesudah softmax; softmax pada dimensi yang lain;
# tanpa mask, atau mask versi buku yang dibaca sebagai keep mask (mask yang menandai posisi
# yang dipertahankan); head dipisahkan tanpa transpose; tanpa proyeksi output. Perubahan yang
# menghasilkan kembali output Anda menunjukkan pemeriksaan mana yang gagal, dan pesannya
# memberi tautan ke bagian buku, atau ke halaman [Jebakan umum](pitfalls.py), yang
# menjelaskan kesalahan itu. Pemeriksaan yang tidak berlaku untuk cara kode Anda ditulis
# tidak diperiksa (skip), beserta alasannya: kelas yang memakai `is_causal=True` tidak
# menyimpan mask, jadi tidak ada yang bisa diperiksa oleh `mask_buffer`.
#
# ## Notebook seorang pembelajar
#
# Notebook ini ditulis oleh seorang pembelajar yang membaca bab ini dalam bahasa Mandarin.
# Isinya sebuah fungsi attention dan sebuah kelas multi-head, dengan bug yang sering dibuat
# pembaca. Repositori ini menyimpannya di `tests/fixtures/check/`, bersama notebook lain yang
# dipakai oleh pengujiannya. Pemeriksa menjalankannya sekali ketika halaman ini dibangun:

# %%
import os
from pathlib import Path

from attention_mechanisms.check import report
from attention_mechanisms.check.cli import run_file

os.chdir("../../../tests/fixtures/check")  # where the repository keeps the learners' notebooks
notebook = "zh-multihead-attention-buggy.ipynb"
cells, components = run_file(Path(notebook))  # run and checked once; words come later


def show(language: str) -> None:
    """The report on the notebook, in ``language``, as ``attention-check --lang`` prints it."""
    result = report.as_dict(notebook, cells, components, language)
    print(report.as_text(result, cells, language=language))
    print("exit status:", report.exit_status([result]))


# %% [markdown]
# Berikut laporannya:

# %% tags=["wrap-output"] lang="en"
show("en")
# Out:
# zh-multihead-attention-buggy.ipynb
#   cell 6: error: TypeError: 'torch.Size' object is not callable (cell 4, line 8)
#
# _attention (as attention_function)
#   FAIL  runs          torch.Size is not callable: shape(-1) should be shape[-1] (TypeError:
#                       'torch.Size' object is not callable (cell 4, line 8: 'd_k = query.shape(-1)'))
#                       (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#calling-xshape-1)
#   skip  shape         not checked: runs did not pass
#   skip  matches_book  not checked: shape did not pass
#   skip  causal        not checked: runs did not pass
#
# MultiHeadAttention
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2), and at 5 shapes; it is
#                       checked with d_in = d_out, which it needs
#   FAIL  runs          torch.Size is not callable: shape(-1) should be shape[-1] (TypeError:
#                       'torch.Size' object is not callable (cell 4, line 8: 'd_k = query.shape(-1)'))
#                       (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#calling-xshape-1)
#   skip  shape         not checked: runs did not pass
#   skip  matches_book  not checked: shape did not pass
#   skip  scale         not checked: shape did not pass
#   skip  softmax_dim   not checked: shape did not pass
#   skip  causal        not checked: shape did not pass
#   skip  diagonal      not checked: shape did not pass
#   skip  mask_buffer   no mask is kept in the module (it is made in forward, or is_causal=True):
#                       nothing to register
#   skip  dropout       not checked: shape did not pass
#   skip  heads         not checked: shape did not pass
#   skip  out_proj      not checked: shape did not pass
# exit status: 1

# %% tags=["wrap-output"] lang="vi"
show("vi")
# Out:
# zh-multihead-attention-buggy.ipynb
#   ô 6: lỗi: TypeError: 'torch.Size' object is not callable (ô 4, dòng 8)
#
# _attention (kiểm tra như attention_function)
#   FAIL  runs          torch.Size không gọi được như hàm: shape(-1) phải là shape[-1] (TypeError:
#                       'torch.Size' object is not callable (ô 4, dòng 8: 'd_k = query.shape(-1)'))
#                       (xem
#                       https://attention-mechanisms.github.io/attention-mechanisms/vi/chapter-3/pitfalls/#gọi-xshape-1)
#   skip  shape         không kiểm tra: runs không đạt
#   skip  matches_book  không kiểm tra: shape không đạt
#   skip  causal        không kiểm tra: runs không đạt
#
# MultiHeadAttention
#   pass  constructs    tạo được MultiHeadAttention(embedding_dim=4, head_count=2), và cả ở 5 bộ kích
#                       thước thử; lớp được kiểm tra với d_in = d_out, vì nó cần như vậy
#   FAIL  runs          torch.Size không gọi được như hàm: shape(-1) phải là shape[-1] (TypeError:
#                       'torch.Size' object is not callable (ô 4, dòng 8: 'd_k = query.shape(-1)'))
#                       (xem
#                       https://attention-mechanisms.github.io/attention-mechanisms/vi/chapter-3/pitfalls/#gọi-xshape-1)
#   skip  shape         không kiểm tra: runs không đạt
#   skip  matches_book  không kiểm tra: shape không đạt
#   skip  scale         không kiểm tra: shape không đạt
#   skip  softmax_dim   không kiểm tra: shape không đạt
#   skip  causal        không kiểm tra: shape không đạt
#   skip  diagonal      không kiểm tra: shape không đạt
#   skip  mask_buffer   module không giữ mask nào (mask được tạo trong forward, hoặc dùng
#                       is_causal=True): không có gì cần đăng ký
#   skip  dropout       không kiểm tra: shape không đạt
#   skip  heads         không kiểm tra: shape không đạt
#   skip  out_proj      không kiểm tra: shape không đạt
# exit status: 1

# %% tags=["wrap-output"] lang="zh"
show("zh")
# Out:
# zh-multihead-attention-buggy.ipynb
#   单元格 6：出错：TypeError: 'torch.Size' object is not callable（单元格 4，第 8 行）
#
# _attention（对应书中的 attention_function）
#   FAIL  runs          torch.Size 不能调用：shape(-1) 应写作 shape[-1]（TypeError: 'torch.Size' object is not callable（单元格 4，第 8 行：'d_k = query.shape(-1)'））（参见 https://attention-mechanisms.github.io/attention-mechanisms/zh/chapter-3/pitfalls/#调用-xshape-1）
#   skip  shape         未检查：runs 没有通过
#   skip  matches_book  未检查：shape 没有通过
#   skip  causal        未检查：runs 没有通过
#
# MultiHeadAttention
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2) 创建成功，5 组形状下也都能创建；它要求 d_in = d_out，所以检查时取二者相等
#   FAIL  runs          torch.Size 不能调用：shape(-1) 应写作 shape[-1]（TypeError: 'torch.Size' object is not callable（单元格 4，第 8 行：'d_k = query.shape(-1)'））（参见 https://attention-mechanisms.github.io/attention-mechanisms/zh/chapter-3/pitfalls/#调用-xshape-1）
#   skip  shape         未检查：runs 没有通过
#   skip  matches_book  未检查：shape 没有通过
#   skip  scale         未检查：shape 没有通过
#   skip  softmax_dim   未检查：shape 没有通过
#   skip  causal        未检查：shape 没有通过
#   skip  diagonal      未检查：shape 没有通过
#   skip  mask_buffer   模块中没有保存掩码（掩码在 forward 中生成，或者用了 is_causal=True）：无需注册
#   skip  dropout       未检查：shape 没有通过
#   skip  heads         未检查：shape 没有通过
#   skip  out_proj      未检查：shape 没有通过
# exit status: 1

# %% tags=["wrap-output"] lang="id"
show("id")
# Out:
# zh-multihead-attention-buggy.ipynb
#   sel 6: error: TypeError: 'torch.Size' object is not callable (sel 4, baris 8)
#
# _attention (sebagai attention_function)
#   FAIL  runs          torch.Size tidak dapat dipanggil: shape(-1) seharusnya shape[-1] (TypeError:
#                       'torch.Size' object is not callable (sel 4, baris 8: 'd_k = query.shape(-1)'))
#                       (lihat
#                       https://attention-mechanisms.github.io/attention-mechanisms/id/chapter-3/pitfalls/#memanggil-xshape-1)
#   skip  shape         tidak diperiksa: runs tidak lolos
#   skip  matches_book  tidak diperiksa: shape tidak lolos
#   skip  causal        tidak diperiksa: runs tidak lolos
#
# MultiHeadAttention
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2), dan pada 5 bentuk;
#                       diperiksa dengan d_in = d_out, karena kelas ini memerlukannya
#   FAIL  runs          torch.Size tidak dapat dipanggil: shape(-1) seharusnya shape[-1] (TypeError:
#                       'torch.Size' object is not callable (sel 4, baris 8: 'd_k = query.shape(-1)'))
#                       (lihat
#                       https://attention-mechanisms.github.io/attention-mechanisms/id/chapter-3/pitfalls/#memanggil-xshape-1)
#   skip  shape         tidak diperiksa: runs tidak lolos
#   skip  matches_book  tidak diperiksa: shape tidak lolos
#   skip  scale         tidak diperiksa: shape tidak lolos
#   skip  softmax_dim   tidak diperiksa: shape tidak lolos
#   skip  causal        tidak diperiksa: shape tidak lolos
#   skip  diagonal      tidak diperiksa: shape tidak lolos
#   skip  mask_buffer   modul tidak menyimpan mask (mask dibuat di forward, atau dipakai
#                       is_causal=True): tidak ada yang perlu didaftarkan
#   skip  dropout       tidak diperiksa: shape tidak lolos
#   skip  heads         tidak diperiksa: shape tidak lolos
#   skip  out_proj      tidak diperiksa: shape tidak lolos
# exit status: 1

# %% [markdown]
# Baris pertama laporan menyebutkan bahwa sel 6 gagal, dan bahwa error-nya berasal dari
# baris 8 di sel 4: `d_k = query.shape(-1)`. Kode itu memanggil shape seolah-olah fungsi,
# padahal `torch.Size` adalah tuple, jadi cara yang benar adalah mengindeksnya: `shape[-1]`.
# Karena satu baris itu, kedua komponen gagal pada pemeriksaan `runs`, dan pemeriksaan
# sesudahnya tidak dapat dijalankan: laporan menandainya skip, dengan alasan "runs tidak
# lolos" atau "shape tidak lolos". Perbaiki baris itu, jalankan pemeriksa lagi, dan semua
# pemeriksaan akan lolos.
#
# Kelas ini tidak punya parameter `d_out`, jadi pemeriksaannya memakai `d_in = d_out`,
# seperti yang tertulis pada baris `constructs`. Mask kelas ini dibuat di `forward`: `tril`
# menandai posisi yang dipertahankan, dan `masked_fill(mask == 0, ...)` menyembunyikan
# sisanya. Itu kebalikan dari konvensi buku, tetapi sama benarnya, jadi tidak ada pemeriksaan
# yang gagal karenanya. Karena modul tidak menyimpan mask, `mask_buffer` tidak diperiksa
# (skip), dan laporan menyebutkan alasannya.
#
# Status keluar (exit status) bernilai 0 jika setiap komponen lolos; 1 jika ada pemeriksaan
# yang gagal, jika pemeriksaan tidak selesai, atau jika sel-sel yang gagal tidak menyisakan
# apa pun untuk diperiksa (di sini nilainya 1); dan 2 jika ada file yang tidak dapat dibaca.
#
# ## Memeriksa tugas satu kelas sekaligus
#
# Seorang pengajar dapat memberikan sebuah folder, atau banyak file sekaligus, kepada
# pemeriksa. Setiap notebook dijalankan dalam prosesnya sendiri, dengan batas yang sama, dan
# beberapa notebook berjalan berdampingan (`--jobs`: secara bawaan satu per core CPU, paling
# banyak empat). Notebook yang melewati batas memori atau waktunya dihentikan dan dilaporkan,
# sementara notebook lainnya tetap berjalan. Laporan diakhiri dengan sebuah tabel, satu baris
# per notebook; `--summary md` hanya mencetak tabel itu, dan `--summary csv` mencetak isi yang
# sama dalam format CSV untuk dibuka di spreadsheet.
#
# ```bash
# attention-check --summary md submissions/
# attention-check --summary csv --lang id submissions/ > results.csv
# ```
#
# Berikut tabelnya untuk notebook-notebook pembelajar yang disimpan bersama pengujian
# repositori ini:

# %%
learners = sorted(Path().glob("*.ipynb"))
checked = [(path, *run_file(path)) for path in learners]  # run and checked once


def summary(language: str) -> None:
    """The summary table of the learners' notebooks, in ``language``."""
    reports = [report.as_dict(str(p), c, found, language) for p, c, found in checked]
    print(report.as_summary(reports, "md", language))


# %% tags=["wrap-output"] lang="en"
summary("en")
# Out:
# | notebook | components | checks failed | cells that failed |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | none | none |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | 6 |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | none | none |
# | vi-simplified-self-attention.ipynb | softmax_naive | none | none |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |

# %% tags=["wrap-output"] lang="vi"
summary("vi")
# Out:
# | notebook | thành phần | phép kiểm tra không đạt | ô bị lỗi |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | không có | không có |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | 6 |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | không có | không có |
# | vi-simplified-self-attention.ipynb | softmax_naive | không có | không có |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |

# %% tags=["wrap-output"] lang="zh"
summary("zh")
# Out:
# | 笔记本 | 组件 | 未通过的检查 | 出错的单元格 |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | 无 | 无 |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | 6 |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | 无 | 无 |
# | vi-simplified-self-attention.ipynb | softmax_naive | 无 | 无 |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |

# %% tags=["wrap-output"] lang="id"
summary("id")
# Out:
# | notebook | komponen | pemeriksaan yang gagal | sel yang gagal |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | tidak ada | tidak ada |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | 6 |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | tidak ada | tidak ada |
# | vi-simplified-self-attention.ipynb | softmax_naive | tidak ada | tidak ada |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |
