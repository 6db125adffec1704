# %% [markdown] english="1ed8242815c7"
# # 检查你的代码
#
# 读本章时，你自己写了 `SelfAttention_v1`、`CausalAttention` 或 `MultiHeadAttention`，运行后也打印出了数字。这些数字和书中的一样吗？`attention-check` 会逐一检查你的笔记本（notebook）里属于第 3 章的类和辅助函数，回答这个问题；如果某个结果与书中不同，它会结合你自己的代码指出原因：是哪个属性、哪个单元格、哪一行。
#
# ```bash
# attention-check my_notebook.ipynb              # 笔记本或 .py 文件均可
# attention-check my_notebook.ipynb --lang vi    # 用越南语输出报告（可选 vi、zh、id、en，中文是 zh）
# attention-check my_notebook.ipynb --json       # 以单个 JSON 对象输出同一份报告
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# 检查器（checker）随本包一起安装（`pip install attention-mechanisms`），不会修改你的文件。笔记本中的代码单元格（cell）会在一个独立的 Python 进程中按顺序运行，和在 Jupyter 里一样；每个单元格限时 30 秒（`--timeout`），总共限时 120 秒，内存上限为 4 GiB（`--memory`）。出错或超时的单元格会写进报告，然后接着运行下一个单元格。IPython 魔法命令和 shell 命令（`%time`、`!pip`）会被跳过，你的代码打印的内容也不会显示。如果系统语言是本书提供的语言之一，报告就用这种语言书写（也可以用 `--lang` 指定）；检查项的名称和 JSON 的键始终保持英文。
#
# ## 检查哪些内容
#
# 检查器先按名称查找你的类（`SelfAttention_v2`、`MHA`、`causal_attention`……），再看构造函数的参数；参数名可以和书中相同，也可以是你自己起的（`dim_in`、`embedding_dim`、`n_head`）。它用书中的参数创建每个类，并在书中的六个词元（token）上运行。接着，它根据形状和名称，把你的权重对应到书中的查询（query）、键（key）、值（value）和输出投影（output projection）。这些权重可以是 `nn.Linear` 层；可以是你自己定义的 `nn.Parameter` 矩阵，两种存储方向都行（`x @ W` 或 `x @ W.T`）；可以是一个大小为 `3 * d_out` 的融合投影，像 GPT-2 和 nanoGPT 那样用 `chunk`、`split` 或 `view` 拆开；也可以是 `nn.MultiheadAttention` 内部的权重。然后，它用你的权重按书中的类计算一遍，再与你的输出比较。至于注意力本身是怎么写的（照书中的写法，用 `einsum` 或 `scaled_dot_product_attention`，把掩码（mask）保存为缓冲区（buffer）或在 `forward` 中生成），都没有关系：只要代码正确，就能通过。
#
# 只用书中的形状，有些错误是暴露不出来的：`d_out=2` 且有两个头时，每个头只有一列；六个词元配上 `context_length=6`，掩码的大小总是正好合适。所以每个类还会在其他形状下运行：批次（batch）大小为 1 和 3，`context_length` 为 6 时只输入 4 个词元，每个头有两列，以及其他维度组合。如果代码在书中的形状下没有问题，换一组形状却出错，报告会指出是哪一组形状、错在哪里。
#
# | 检查项 | 通过条件 |
# | --- | --- |
# | `constructs` | 能用书中的参数创建，在其他各组形状下也都能创建 |
# | `runs` | 在每一种输入上都能运行（v1 和 v2 用单个序列，其他类用一个批次） |
# | `shape` | 输出始终具有书中的形状 |
# | `matches_book` | 权重相同时，输出始终与书中的结果一致，误差不超过 1e-5 |
# | `scale` | 在 softmax 之前，分数除以了键维度的平方根 |
# | `softmax_dim` | 权重在键的维度上归一化 |
# | `causal` | 任何输出都不依赖于后面的词元 |
# | `diagonal` | 每个词元都能看到自己 |
# | `mask_buffer` | 保存在模块中的掩码是已注册的缓冲区（模块中没有保存掩码时跳过） |
# | `dropout` | dropout 作用于注意力权重，并把保留下来的权重乘以 1/(1-p)；评估模式下不做 dropout |
# | `heads` | 每个头都是单头注意力，使用权重中属于自己的那一部分 |
# | `out_proj` | 应用了输出投影 |
#
# 输出不同时，检查器会每次只改动一处，重新计算书中的结果：不缩放，或者在 softmax 之后才缩放；在另一个维度上做 softmax；不加掩码，或者把书中的掩码当作保留掩码（keep mask）来用；拆分多头时不做转置；不用输出投影。哪一处改动能复现你的输出，就说明哪一项检查没有通过；报告中的消息还附有链接，指向书中或[常见陷阱](pitfalls.py)页面里讲解这个问题的小节。如果你的代码写法让某项检查无从下手，这项检查就会被跳过，并注明原因：例如，使用 `is_causal=True` 的类根本不保存掩码，`mask_buffer` 也就没有可检查的对象。
#
# ## 一位学习者的笔记本
#
# 这个笔记本是一位用中文阅读本章的学习者写的。它定义了一个注意力函数和一个多头注意力（multi-head attention）类，其中有一个很多读者都会犯的错误。仓库把它和测试用到的其他笔记本一起保存在 `tests/fixtures/check/` 中。构建本页时，检查器运行了它一次：

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
# 下面是它得到的报告：

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
# `shape(-1)` 是把 shape 当成函数来调用；`torch.Size` 是一个元组，应该用索引取值：`shape[-1]`。就因为这一行，两个组件（`_attention` 和 `MultiHeadAttention`）的 `runs` 都没有通过，之后的检查也都无法进行，只能跳过。改正这一行，再运行一次检查器，所有检查都会通过。这个类没有 `d_out` 参数，所以检查时取 `d_in = d_out`（见 `constructs` 那一行）。它在 `forward` 中生成掩码：用 `tril` 标记要保留的位置，再用 `masked_fill(mask == 0, ...)` 隐藏其余位置。这与书中的约定正好相反，但同样正确，所以不会有检查因此失败；模块中也没有保存掩码，所以 `mask_buffer` 被跳过。
#
# 所有组件都通过时，退出状态（exit status）为 0；有检查未通过、检查没能完成，或者出错的单元格导致没有任何内容可供检查时，退出状态为 1；文件无法读取时，退出状态为 2。
#
# ## 一次检查全班的作业
#
# 老师可以把一个文件夹或多个文件交给检查器。每个笔记本在各自的进程中运行，限制与上面相同，并且可以同时运行好几个（`--jobs`：默认每个 CPU 核心一个，最多四个）；某个笔记本超出内存或时间限制时，会被终止并写进报告，其他笔记本照常检查。报告最后是一张汇总表，每个笔记本占一行；`--summary md` 只打印这张表，`--summary csv` 则以 CSV 格式输出同样的内容，方便导入电子表格。
#
# ```bash
# attention-check --summary md submissions/
# attention-check --summary csv --lang id submissions/ > results.csv
# ```
#
# 下面是测试中保存的几个学习者笔记本的汇总表：

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
