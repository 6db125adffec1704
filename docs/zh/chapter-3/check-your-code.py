# %% [markdown] english="ef4cb891c302"
# # 检查你的代码
#
# 你在阅读本章时写了自己的 `SelfAttention_v1`、`CausalAttention` 或 `MultiHeadAttention`，它也打印出了数字。这些数字和书中的一样吗？`attention-check` 会针对你笔记本（notebook）中的每一个第 3 章的类和辅助函数回答这个问题；当某个结果不同时，它会结合你自己的代码说明原因：是哪个属性、哪个单元格、哪一行。
#
# ```bash
# attention-check my_notebook.ipynb          # a notebook, or a .py file
# attention-check my_notebook.ipynb --json   # the same report as one JSON object
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# 它随本包一起安装（`pip install attention-mechanisms`）。你的文件永远不会被修改。文件中的代码单元格会在一个独立的 Python 进程中按顺序运行，就像在 Jupyter 中一样，每个单元格的时间限制为 30 秒（`--timeout`），总计 120 秒。失败或超时的单元格会被报告出来，然后继续运行下一个单元格。IPython 的特殊行（`%time`、`!pip`）会被跳过，你的代码打印的内容也不会显示。
#
# ## 它检查什么
#
# 它先按名称查找你的类（`SelfAttention_v2`、`MHA`、`causal_attention`……），再根据它们的参数来识别，参数名可以与书中相同，也可以是你自己起的（`dim_in`、`embedding_dim`、`head_count`）。它用书中的参数构建每一个类，在书中的六个词元（token）上运行，并按你创建权重的顺序（查询、键、值，然后是输出投影），把它的权重复制到本包中承担相同角色的类里，以便比较输出。
#
# | 检查项 | 通过条件 |
# | --- | --- |
# | `constructs` | 能用书中的参数构建 |
# | `runs` | 能在书中的输入上运行（v1 和 v2 用单个序列，其他类用两个序列组成的批次） |
# | `shape` | 输出具有书中的形状 |
# | `matches_book` | 权重相同时，输出与书中的结果相差不超过 1e-5 |
# | `scale` | 分数除以了键维度的平方根 |
# | `softmax_dim` | 权重在键的维度上归一化 |
# | `causal` | 没有任何输出依赖于后面的词元 |
# | `diagonal` | 每个词元都能看到自己 |
# | `mask_buffer` | 掩码是一个已注册的缓冲区（buffer） |
# | `dropout` | dropout 作用于注意力权重；评估模式下的结果是确定的 |
# | `heads` | 每个头都是单头注意力，并使用权重中属于自己的那一部分 |
# | `out_proj` | 应用了输出投影 |
#
# 当输出不同时，检查器会每次只改动一处（不缩放、在另一个维度上做 softmax、不加掩码……），重新计算书中的结果。哪一处改动能复现你的输出，就说明哪一项检查没有通过。
#
# ## 一位学习者的笔记本
#
# 这个笔记本是一位用中文阅读本章的学习者写的。它定义了一个注意力函数和一个多头注意力类，其中有一个很多读者都会犯的错误。仓库把它保存在 `tests/fixtures/check/` 中。下面是它得到的报告，在构建本页时生成：

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
# `shape(-1)` 是在调用 shape：`torch.Size` 是一个元组，所以应该用索引 `shape[-1]`。就因为这一行，两个组件都无法运行，它之后的内容也都无法检查。报告还指出了代码所用的掩码约定。`tril` 标记的是要保留的位置，而 `masked_fill(mask == 0, ...)` 把其余位置隐藏起来。这是前后一致的，所以不算错误，但它与书中的掩码正好相反，书中的掩码标记的是要隐藏的位置。[常见陷阱](pitfalls.py)页面对这两个问题都有介绍。
#
# 改正这一行，再运行一次检查器，所有检查都会通过。每个组件都通过时，退出状态为 0；某项检查失败、检查未能完成，或者失败的单元格导致没有任何内容可供检查时，退出状态为 1；文件无法读取时，退出状态为 2。
