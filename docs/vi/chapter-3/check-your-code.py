# %% [markdown] english="1ed8242815c7"
# # Kiểm tra code của bạn
#
# Trong lúc đọc chương này, bạn đã tự viết `SelfAttention_v1`, `CausalAttention` hay
# `MultiHeadAttention` của riêng mình, và code đó in ra các con số. Nhưng đó có đúng là những
# con số của sách không? `attention-check` trả lời câu hỏi này cho mọi lớp và hàm hỗ trợ của
# chương 3 trong notebook của bạn, và khi có chỗ khác sách, nó cho biết lý do và chỉ thẳng vào
# code của bạn: thuộc tính nào, ô nào, dòng nào.
#
# ```bash
# attention-check my_notebook.ipynb              # a notebook, or a .py file
# attention-check my_notebook.ipynb --lang vi    # the report in Vietnamese (vi, zh, id, en)
# attention-check my_notebook.ipynb --json       # the same report as one JSON object
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# Công cụ này đi kèm gói (package) của sách, cài bằng `pip install attention-mechanisms`. File
# của bạn không bao giờ bị sửa. Các ô code của file chạy trong một tiến trình Python riêng, lần
# lượt theo thứ tự như trong Jupyter, với giới hạn thời gian 30 giây cho mỗi ô (`--timeout`),
# 120 giây cho cả lượt chạy, và tối đa 4 GiB bộ nhớ (`--memory`). Ô nào bị lỗi hoặc chạy quá
# thời gian sẽ được ghi vào báo cáo, rồi lượt chạy tiếp tục với ô kế tiếp. Các dòng IPython
# (`%time`, `!pip`) bị bỏ qua, và những gì code của bạn in ra không được hiển thị. Báo cáo được
# viết bằng ngôn ngữ của hệ thống nếu đó là một trong các ngôn ngữ của sách (muốn chọn ngôn ngữ
# khác thì dùng `--lang`); tên các phép kiểm tra và các khóa JSON vẫn giữ tiếng Anh.
#
# ## Những gì được kiểm tra
#
# Công cụ tìm các lớp của bạn theo tên (`SelfAttention_v2`, `MHA`, `causal_attention`...), rồi
# theo tham số của chúng, dù bạn đặt tên như sách hay theo cách của riêng mình (`dim_in`,
# `embedding_dim`, `n_head`). Nó khởi tạo từng lớp với các đối số của sách và chạy trên sáu
# token của sách. Sau đó, dựa vào shape và tên, nó nhận ra trong trọng số của bạn bốn phép
# chiếu (projection) của sách: query (truy vấn), key (khóa), value (giá trị) và phép chiếu đầu
# ra (output projection). Các trọng số này có thể nằm trong các tầng `nn.Linear`; trong các ma
# trận `nn.Parameter` tự tạo, lưu theo chiều nào cũng được (`x @ W` hay `x @ W.T`); trong một
# phép chiếu hợp nhất (fused projection) rộng `3 * d_out`, tách ra bằng `chunk`, `split` hoặc
# `view` như cách GPT-2 và nanoGPT viết; hoặc bên trong `nn.MultiheadAttention`. Dùng chính các
# trọng số đó, công cụ tính lại kết quả mà lớp của sách tính ra, rồi so sánh hai đầu ra. Phần
# attention (cơ chế chú ý) bạn viết theo cách nào cũng được: như sách, bằng `einsum` hay
# `scaled_dot_product_attention`, với mask (mặt nạ) giữ trong một buffer (bộ đệm) hay tạo ngay
# trong `forward`. Miễn code đúng là đạt.
#
# Riêng các kích thước trong sách lại che mất một số lỗi: với `d_out=2` và hai head (đầu), mỗi
# head chỉ có một cột, còn với sáu token và `context_length=6` thì mask lúc nào cũng vừa khít.
# Vì vậy, mỗi lớp còn được chạy thêm ở các bộ kích thước thử: batch (lô) gồm 1 chuỗi và gồm 3
# chuỗi, 4 token với `context_length` bằng 6, head có hai cột, và một vài kích thước khác nữa.
# Khi code chạy được với kích thước của sách nhưng gặp lỗi ở một bộ kích thước khác, báo cáo sẽ
# cho biết đó là bộ kích thước nào và vì sao.
#
# | phép kiểm tra | đạt khi |
# | --- | --- |
# | `constructs` | lớp khởi tạo được với các đối số của sách, và với mọi bộ kích thước khác |
# | `runs` | lớp chạy được trên mọi đầu vào (một chuỗi cho v1 và v2, một batch cho các lớp còn lại) |
# | `shape` | đầu ra lúc nào cũng có shape như trong sách |
# | `matches_book` | với cùng trọng số, đầu ra lúc nào cũng bằng đầu ra của sách, sai khác không quá 1e-5 |
# | `scale` | điểm chú ý (attention scores) được chia cho căn bậc hai của số chiều key, trước softmax |
# | `softmax_dim` | trọng số chú ý (attention weights) được chuẩn hóa theo các key |
# | `causal` | không đầu ra nào phụ thuộc vào một token đứng sau |
# | `diagonal` | mỗi token nhìn thấy chính nó |
# | `mask_buffer` | mask được giữ trong module là một buffer đã đăng ký (module không giữ mask: bỏ qua) |
# | `dropout` | dropout tác động lên trọng số chú ý và nhân các giá trị còn lại với 1/(1-p); ở chế độ đánh giá (eval) thì không có dropout |
# | `heads` | mỗi head hoạt động như một attention một đầu, dùng phần trọng số riêng của nó |
# | `out_proj` | phép chiếu đầu ra được áp dụng |
#
# Khi đầu ra khác sách, công cụ kiểm tra tính lại kết quả của sách, mỗi lần chỉ thay đổi một
# điều: không chia tỉ lệ, hoặc chia tỉ lệ sau softmax; softmax theo chiều còn lại; không dùng
# mask, hoặc hiểu mask của sách thành mask giữ (keep mask); tách các head mà không chuyển vị;
# bỏ phép chiếu đầu ra. Thay đổi nào tái tạo đúng đầu ra của bạn sẽ cho biết phép kiểm tra nào
# không đạt, và thông báo có kèm liên kết tới mục giải thích lỗi đó trong sách hoặc trong trang
# [Lỗi thường gặp](pitfalls.py). Phép kiểm tra nào không áp dụng được cho cách bạn viết code thì
# bị bỏ qua (skip), kèm lý do: chẳng hạn, một lớp dùng `is_causal=True` không giữ mask nào, nên
# `mask_buffer` không có gì để kiểm tra.
#
# ## Notebook của một người học
#
# Notebook này do một người học viết trong lúc đọc chương này bằng tiếng Trung. Nó định nghĩa
# một hàm attention và một lớp multi-head attention (attention nhiều đầu), kèm theo một lỗi mà
# nhiều người đọc mắc phải. Repository lưu nó trong `tests/fixtures/check/`, cùng với các
# notebook khác mà bộ test sử dụng. Công cụ kiểm tra đã chạy nó một lần khi trang này được xây
# dựng:

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
# Và đây là báo cáo về notebook đó:

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
# Dòng đầu của báo cáo cho biết ô 6 bị lỗi, nhưng dòng gây lỗi nằm ở ô 4, dòng 8, trong hàm
# `_attention`: `shape(-1)` gọi shape như một hàm, trong khi `torch.Size` là một tuple, nên phải
# lấy phần tử bằng chỉ số, `shape[-1]`. Chỉ vì một dòng đó mà cả hai thành phần, `_attention`
# (được kiểm tra như hàm `attention_function` của sách) và `MultiHeadAttention`, đều không đạt
# `runs`, nên các phép kiểm tra phía sau đều bị bỏ qua. Sửa dòng đó, chạy lại công cụ kiểm tra,
# và mọi phép kiểm tra đều đạt. Lớp này không có tham số `d_out`, nên nó được kiểm tra với
# `d_in = d_out`. Nó tạo mask ngay trong `forward`: `tril` đánh dấu các vị trí cần giữ, và
# `masked_fill(mask == 0, ...)` che các vị trí còn lại. Quy ước đó ngược với quy ước của sách
# nhưng đúng không kém, nên công cụ không coi đó là lỗi; và vì module không giữ mask nào,
# `mask_buffer` bị bỏ qua.
#
# Mã thoát (exit status) là 0 khi mọi thành phần đều đạt; là 1 khi có một phép kiểm tra không
# đạt, khi các phép kiểm tra không chạy xong, hoặc khi các ô bị lỗi khiến không còn gì để kiểm
# tra; và là 2 khi không đọc được file. Với notebook trên, `runs` không đạt nên mã thoát là 1.
#
# ## Kiểm tra bài của cả lớp học một lượt
#
# Giáo viên có thể đưa cho công cụ kiểm tra cả một thư mục, hoặc nhiều file một lúc. Mỗi
# notebook chạy trong một tiến trình riêng, với cùng các giới hạn như trên, và nhiều notebook
# chạy song song (`--jobs`: mặc định mỗi lõi CPU một notebook, tối đa bốn). Notebook nào vượt
# giới hạn bộ nhớ hoặc thời gian sẽ bị dừng và được ghi vào báo cáo, còn các notebook khác vẫn
# chạy tiếp. Cuối báo cáo là một bảng tổng hợp, mỗi notebook một hàng; `--summary md` chỉ in
# bảng đó, còn `--summary csv` in cùng nội dung dưới dạng CSV để mở bằng bảng tính.
#
# ```bash
# attention-check --summary md submissions/
# attention-check --summary csv --lang id submissions/ > results.csv
# ```
#
# Đây là bảng tổng hợp cho các notebook của người học mà bộ test lưu lại:

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
