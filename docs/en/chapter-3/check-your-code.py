# %% [markdown]
# # Check your code
#
# You wrote your own `SelfAttention_v1`, `CausalAttention` or `MultiHeadAttention` while
# reading the chapter, and it prints numbers. Are they the book's? `attention-check` answers
# that for every chapter-3 class and helper in your notebook, and when one differs it says
# why, in terms of your own code: the attribute, the cell and the line.
#
# ```bash
# attention-check my_notebook.ipynb          # a notebook, or a .py file
# attention-check my_notebook.ipynb --json   # the same report as one JSON object
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# It comes with the package (`pip install attention-mechanisms`). Your file is never changed.
# Its code cells run in a separate Python process, in order, as in Jupyter, with a time
# limit of 30 seconds a cell (`--timeout`) and 120 seconds in all. A cell that fails or runs
# out of time is reported, and the run goes on with the next one. IPython lines (`%time`,
# `!pip`) are left out, and what your code prints is not shown.
#
# ## What it checks
#
# It finds your classes by name (`SelfAttention_v2`, `MHA`, `causal_attention`...), then by
# their parameters, named as the book does or as you did (`dim_in`, `embedding_dim`,
# `head_count`). It builds each one with the book's arguments, runs it on the book's six
# tokens, and copies its weights into the package's class for the same role, in the order
# you created them (query, key, value, then the output projection), to compare the outputs.
#
# | check | passes when |
# | --- | --- |
# | `constructs` | it builds with the book's arguments |
# | `runs` | it runs on the book's input (one sequence for v1 and v2, a batch of two for the others) |
# | `shape` | the output has the book's shape |
# | `matches_book` | with the same weights, the output equals the book's to 1e-5 |
# | `scale` | the scores are divided by the square root of the key dimension |
# | `softmax_dim` | the weights are normalised over the keys |
# | `causal` | no output depends on a later token |
# | `diagonal` | each token sees itself |
# | `mask_buffer` | the mask is a registered buffer |
# | `dropout` | dropout acts on the attention weights; eval mode is deterministic |
# | `heads` | each head is single-head attention with its own slice of the weights |
# | `out_proj` | the output projection is applied |
#
# When the outputs differ, the checker recomputes the book's result with one thing changed
# at a time (no scaling, the softmax over the other dimension, no mask...). The change that
# reproduces your output names the check that fails.
#
# ## A learner's notebook
#
# This notebook was written by a learner reading the chapter in Chinese. It defines an
# attention function and a multi-head class, with a bug that many readers make. The
# repository keeps it in `tests/fixtures/check/`. Here is the report it gets, produced when
# this page was built:

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
# `shape(-1)` calls the shape: `torch.Size` is a tuple, so it is indexed, `shape[-1]`. Both
# components fail to run because of that one line, and nothing after it can be checked. The
# report also names the mask convention in use. `tril` marks the positions to keep, and
# `masked_fill(mask == 0, ...)` hides the others. That is consistent, so it is not an error,
# but it is the opposite of the book's mask, which marks the positions to hide. The
# [Pitfalls](pitfalls.py) page has both mistakes.
#
# Fix the line, run the checker again, and every check passes. The exit status is 0 when
# every component passes; 1 when a check fails, when the checks do not finish, or when
# failing cells leave nothing to check; and 2 when the file cannot be read.
