# %% [markdown]
# # Check your code
#
# You wrote your own `SelfAttention_v1`, `CausalAttention` or `MultiHeadAttention` while
# reading the chapter, and it prints numbers. Are they the book's? `attention-check` answers
# that for every chapter-3 class and helper in your notebook, and when one differs it says
# why, in terms of your own code: the attribute, the cell and the line.
#
# ```bash
# attention-check my_notebook.ipynb              # a notebook, or a .py file
# attention-check my_notebook.ipynb --lang vi    # the report in Vietnamese (vi, zh, id, en)
# attention-check my_notebook.ipynb --json       # the same report as one JSON object
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# It comes with the package (`pip install attention-mechanisms`). Your file is never changed.
# Its code cells run in a separate Python process, in order, as in Jupyter, with a time
# limit of 30 seconds a cell (`--timeout`) and 120 seconds in all, and at most 4 GiB of
# memory (`--memory`). A cell that fails or runs out of time is reported, and the run goes
# on with the next one. IPython lines (`%time`, `!pip`) are left out, and what your code
# prints is not shown. The report is written in your system's language when it is one of
# the book's (`--lang` chooses); the check names and the JSON keys stay English.
#
# ## What it checks
#
# It finds your classes by name (`SelfAttention_v2`, `MHA`, `causal_attention`...), then by
# their parameters, named as the book does or as you did (`dim_in`, `embedding_dim`,
# `n_head`). It builds each one with the book's arguments and runs it on the book's six
# tokens. Then it reads your weights as the book's query, key, value and output
# projections, by their shapes and names: `nn.Linear` layers, your own `nn.Parameter`
# matrices stored either way round (`x @ W` or `x @ W.T`), one fused projection of
# `3 * d_out` split by `chunk`, `split` or `view` as GPT-2 and nanoGPT write it, or the
# weights inside `nn.MultiheadAttention`. With your weights, it computes what the book's
# class computes and compares the outputs. However you wrote the attention itself (the book's
# way, `einsum`, `scaled_dot_product_attention`, a mask kept as a buffer or built in
# `forward`), correct code passes.
#
# The book's own shapes hide some mistakes: with `d_out=2` and two heads, each head has one
# column, and with six tokens and `context_length=6` the mask always fits, even a mask of
# six tokens left in the notebook. So every class is also run with a batch of 1 and of 3,
# with 4 tokens for a `context_length` of 6, with 10 tokens for a `context_length` of 10,
# with heads of two columns, and at other sizes. When code works at the book's shapes and
# fails at another, the report says at which and why.
#
# | check | passes when |
# | --- | --- |
# | `constructs` | it builds with the book's arguments, and at every other size |
# | `runs` | it runs on every input (one sequence for v1 and v2, a batch for the others) |
# | `shape` | the output has the book's shape, every time |
# | `matches_book` | with the same weights, the output equals the book's to 1e-5, every time |
# | `scale` | the scores are divided by the square root of the key dimension, before the softmax |
# | `softmax_dim` | the weights are normalised over the keys |
# | `causal` | no output depends on a later token: changing the last token leaves the others' outputs alone |
# | `diagonal` | each token sees itself; the first, which sees only itself, gets a number, not NaN |
# | `weights_sum` | given equal tokens, every token gets the same output, as weights that sum to 1 give |
# | `mask_buffer` | a mask kept in the module is a registered buffer, and `forward` reads it (no mask kept: skipped) |
# | `dropout` | dropout acts on the attention weights and scales the survivors by 1/(1-p); eval mode has none |
# | `heads` | each head is single-head attention with its own slice of the weights |
# | `out_proj` | the output projection is applied |
# | `window` | with a sliding window of `w`, each token sees itself and the `w - 1` before it |
# | `kv_groups` | each key-value head serves its consecutive query heads (`repeat_interleave`) |
# | `rotation` | `apply_rope` turns feature `k` with feature `k + d/2`, by the book's angles |
#
# When the outputs differ, the checker recomputes the book's result with one thing changed
# at a time: no scaling, or scaling after the softmax; the softmax over the other dimension;
# no mask, or the book's mask read as a keep mask; the heads split without a transpose; no
# output projection. The change that reproduces your output names the check that fails,
# and the message links to the section of the book, or of the [Pitfalls](pitfalls.py), that
# explains it. A check that cannot apply to the way your code is written is skipped, with
# the reason: a class that uses `is_causal=True` keeps no mask, so `mask_buffer` has nothing
# to look at.
#
# When no such change reproduces your output, the checker works the cause out from how your
# module behaves. Where your projections carry the book's names (`W_query`, `W_key`,
# `W_value`), it takes each by its name: an output that equals the book's only with two of
# them exchanged (`keys @ queries.T`) fails, since weights loaded by name would then be
# wrong, and values that equal the keys are named as `values = W_key(x)`. It changes each
# of your parameters in turn and names one that changes nothing. It measures the number
# your scores are divided by and names the expression behind it (`d_k ** 1/2` is
# `(d_k ** 1) / 2`). It finds where your dropout acts: on the weights, the values or the
# context vectors. It blames a mask of your notebook only when changing that mask changes
# your output and changing the module's own does not. A class that fails at one size is
# still compared at the sizes where it runs.
#
# It checks your own version of today's attention the same way: `GroupedQueryAttention`,
# `MultiHeadAttentionWithSWA`, `MultiHeadLatentAttention` and `GatedDeltaNet` with the
# package's signatures, and `compute_rope_params` and `apply_rope`. It builds each class at
# several sizes and compares it with the package's class holding your weights, taken by name
# or read by their shapes (a fused key-value projection too). It checks that each class is
# causal, that a sliding window shows each token exactly its window, that grouped-query
# attention shares each key-value head with its consecutive query heads, and that
# `apply_rope` turns feature `k` with feature `k + d/2`; one that turns neighbouring features
# together is named as the other layout. The last three checks in the table are theirs.
#
# Four checks need no book to compare with, and they run whatever the comparison says:
# `causal` changes the last token and watches the earlier outputs, `diagonal` looks at the
# first token's output, `weights_sum` gives the class six equal tokens, and `mask_buffer`
# changes the registered mask and watches the output. So code that differs from the book in
# a way no known mistake explains still gets their verdicts, each with what it saw.
#
# ## A learner's notebook
#
# This notebook was written by a learner reading the chapter in Chinese. It defines an
# attention function and a multi-head class, with a bug that many readers make. The
# repository keeps it in `tests/fixtures/check/`, with the other notebooks its tests use.
# The checker ran it once when this page was built:

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
# Here is its report:

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
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2), and at 6 shapes; it is
#                       checked with d_in = d_out, which it needs
#   FAIL  runs          torch.Size is not callable: shape(-1) should be shape[-1] (TypeError:
#                       'torch.Size' object is not callable (cell 4, line 8: 'd_k = query.shape(-1)'))
#                       (see
#                       https://attention-mechanisms.github.io/attention-mechanisms/en/chapter-3/pitfalls/#calling-xshape-1)
#   skip  shape         not checked: runs did not pass
#   skip  matches_book  not checked: shape did not pass
#   skip  scale         not checked: shape did not pass
#   skip  softmax_dim   not checked: shape did not pass
#   skip  causal        not checked: runs did not pass
#   skip  diagonal      not checked: runs did not pass
#   skip  weights_sum   not checked: runs did not pass
#   skip  mask_buffer   no mask is kept in the module (it is made in forward, or is_causal=True):
#                       nothing to register
#   skip  dropout       it takes no dropout rate
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
#   skip  shape         chưa được kiểm tra: runs không đạt
#   skip  matches_book  chưa được kiểm tra: shape không đạt
#   skip  causal        chưa được kiểm tra: runs không đạt
#
# MultiHeadAttention
#   pass  constructs    tạo được MultiHeadAttention(embedding_dim=4, head_count=2), và cả ở 6 bộ kích
#                       thước thử; lớp được kiểm tra với d_in = d_out, vì nó cần như vậy
#   FAIL  runs          torch.Size không gọi được như hàm: shape(-1) phải là shape[-1] (TypeError:
#                       'torch.Size' object is not callable (ô 4, dòng 8: 'd_k = query.shape(-1)'))
#                       (xem
#                       https://attention-mechanisms.github.io/attention-mechanisms/vi/chapter-3/pitfalls/#gọi-xshape-1)
#   skip  shape         chưa được kiểm tra: runs không đạt
#   skip  matches_book  chưa được kiểm tra: shape không đạt
#   skip  scale         chưa được kiểm tra: shape không đạt
#   skip  softmax_dim   chưa được kiểm tra: shape không đạt
#   skip  causal        chưa được kiểm tra: runs không đạt
#   skip  diagonal      chưa được kiểm tra: runs không đạt
#   skip  weights_sum   chưa được kiểm tra: runs không đạt
#   skip  mask_buffer   module không giữ mask nào (mask được tạo trong forward, hoặc dùng
#                       is_causal=True): không có gì cần đăng ký
#   skip  dropout       không nhận tỉ lệ dropout
#   skip  heads         chưa được kiểm tra: shape không đạt
#   skip  out_proj      chưa được kiểm tra: shape không đạt
# exit status: 1

# %% tags=["wrap-output"] lang="zh"
show("zh")
# Out:
# zh-multihead-attention-buggy.ipynb
#   单元格 6：出错：TypeError: 'torch.Size' object is not callable（单元格 4，第 8 行）
#
# _attention（识别为 attention_function）
#   FAIL  runs          torch.Size 不能调用：shape(-1) 应写作 shape[-1]（TypeError: 'torch.Size' object is not callable（单元格 4，第 8 行：'d_k = query.shape(-1)'））（参见 https://attention-mechanisms.github.io/attention-mechanisms/zh/chapter-3/pitfalls/#调用-xshape-1）
#   skip  shape         未检查：runs 没有通过
#   skip  matches_book  未检查：shape 没有通过
#   skip  causal        未检查：runs 没有通过
#
# MultiHeadAttention
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2) 创建成功，6 组形状下也都能创建；它要求 d_in = d_out，所以检查时取二者相等
#   FAIL  runs          torch.Size 不能调用：shape(-1) 应写作 shape[-1]（TypeError: 'torch.Size' object is not callable（单元格 4，第 8 行：'d_k = query.shape(-1)'））（参见 https://attention-mechanisms.github.io/attention-mechanisms/zh/chapter-3/pitfalls/#调用-xshape-1）
#   skip  shape         未检查：runs 没有通过
#   skip  matches_book  未检查：shape 没有通过
#   skip  scale         未检查：shape 没有通过
#   skip  softmax_dim   未检查：shape 没有通过
#   skip  causal        未检查：runs 没有通过
#   skip  diagonal      未检查：runs 没有通过
#   skip  weights_sum   未检查：runs 没有通过
#   skip  mask_buffer   模块中没有保存掩码（掩码在 forward 中生成，或者用了 is_causal=True）：无需注册
#   skip  dropout       它不接受丢弃率参数
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
#   pass  constructs    MultiHeadAttention(embedding_dim=4, head_count=2), dan berhasil dibangun pada
#                       6 bentuk yang diuji; diperiksa dengan d_in = d_out, karena kelas ini
#                       memerlukannya
#   FAIL  runs          torch.Size tidak dapat dipanggil: shape(-1) seharusnya shape[-1] (TypeError:
#                       'torch.Size' object is not callable (sel 4, baris 8: 'd_k = query.shape(-1)'))
#                       (lihat
#                       https://attention-mechanisms.github.io/attention-mechanisms/id/chapter-3/pitfalls/#memanggil-xshape-1)
#   skip  shape         tidak diperiksa: runs tidak lolos
#   skip  matches_book  tidak diperiksa: shape tidak lolos
#   skip  scale         tidak diperiksa: shape tidak lolos
#   skip  softmax_dim   tidak diperiksa: shape tidak lolos
#   skip  causal        tidak diperiksa: runs tidak lolos
#   skip  diagonal      tidak diperiksa: runs tidak lolos
#   skip  weights_sum   tidak diperiksa: runs tidak lolos
#   skip  mask_buffer   modul tidak menyimpan mask (mask dibuat di forward, atau kelas memakai
#                       is_causal=True): tidak ada yang perlu didaftarkan
#   skip  dropout       tidak menerima laju dropout
#   skip  heads         tidak diperiksa: shape tidak lolos
#   skip  out_proj      tidak diperiksa: shape tidak lolos
# exit status: 1

# %% [markdown]
# `shape(-1)` calls the shape: `torch.Size` is a tuple, so it is indexed, `shape[-1]`. Both
# components fail to run because of that one line, and nothing after it can be checked.
# Fix the line, run the checker again, and every check passes. The class has no `d_out`
# parameter, so it is checked with `d_in = d_out`; it builds its mask in `forward`, where
# `tril` marks the positions to keep and `masked_fill(mask == 0, ...)` hides the others.
# That is the opposite of the book's convention and just as correct, so nothing fails, and
# with no mask kept in the module `mask_buffer` is skipped.
#
# The exit status is 0 when every component passes; 1 when a check fails, when the checks
# do not finish, or when failing cells leave nothing to check; and 2 when a file cannot be
# read.
#
# ## A whole class at once
#
# A teacher can give the checker a folder, or many files. Each notebook runs in its own
# process, with the same limits, several side by side (`--jobs`: by default one per core,
# up to four). An allocation past the memory limit fails in its cell like any other error,
# and the cells after it still run; a notebook that holds so much that nothing more can be
# allocated, or that runs past its time limit, is stopped and reported while the others go
# on. The report ends with a table, one row per notebook;
# `--summary md` prints only that table, and `--summary csv` the same as CSV for a
# spreadsheet.
#
# ```bash
# attention-check --summary md submissions/
# attention-check --summary csv --lang id submissions/ > results.csv
# ```
#
# For the learners' notebooks that the tests keep:

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
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | none |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | none | none |
# | vi-simplified-self-attention.ipynb | softmax_naive | none | none |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |

# %% tags=["wrap-output"] lang="vi"
summary("vi")
# Out:
# | notebook | thành phần | phép kiểm tra không đạt | ô bị lỗi |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | không có | không có |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | không có |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | không có | không có |
# | vi-simplified-self-attention.ipynb | softmax_naive | không có | không có |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |

# %% tags=["wrap-output"] lang="zh"
summary("zh")
# Out:
# | 笔记本 | 组件 | 未通过的检查 | 出错的单元格 |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | 无 | 无 |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | 无 |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | 无 | 无 |
# | vi-simplified-self-attention.ipynb | softmax_naive | 无 | 无 |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |

# %% tags=["wrap-output"] lang="id"
summary("id")
# Out:
# | notebook | komponen | pemeriksaan yang gagal | sel yang gagal |
# |---|---|---|---|
# | id-chapter-3-full.ipynb | softmax_naive, SelfAttention_v1, SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | tidak ada | tidak ada |
# | vi-multihead-attention.ipynb | CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention | MultiHeadAttention.runs | tidak ada |
# | vi-self-attention-v1-v2.ipynb | SelfAttention_v1, SelfAttention_v2 | tidak ada | tidak ada |
# | vi-simplified-self-attention.ipynb | softmax_naive | tidak ada | tidak ada |
# | zh-multihead-attention-buggy.ipynb | _attention, MultiHeadAttention | _attention.runs, MultiHeadAttention.runs | 6 |
