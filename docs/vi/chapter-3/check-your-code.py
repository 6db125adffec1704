# %% [markdown] english="ef4cb891c302"
# # Kiểm tra code của bạn
#
# Bạn đã tự viết `SelfAttention_v1`, `CausalAttention` hay `MultiHeadAttention` của riêng mình
# trong lúc đọc chương này, và nó in ra các con số. Chúng có khớp với sách không?
# `attention-check` trả lời câu hỏi đó cho mọi lớp và hàm hỗ trợ của chương 3 trong notebook của
# bạn, và khi có chỗ khác, nó cho biết lý do, bằng chính code của bạn: thuộc tính nào, ô nào và
# dòng nào.
#
# ```bash
# attention-check my_notebook.ipynb          # a notebook, or a .py file
# attention-check my_notebook.ipynb --json   # the same report as one JSON object
# python -m attention_mechanisms.check my_notebook.ipynb
# ```
#
# Công cụ này có sẵn trong gói (`pip install attention-mechanisms`). File của bạn không bao
# giờ bị thay đổi. Các ô code của file chạy trong một tiến trình Python riêng, theo thứ tự, như
# trong Jupyter, với giới hạn thời gian 30 giây mỗi ô (`--timeout`) và tổng cộng 120 giây. Một ô bị
# lỗi hoặc chạy quá thời gian sẽ được báo cáo, và lượt chạy tiếp tục với ô kế tiếp. Các dòng
# IPython (`%time`, `!pip`) bị bỏ qua, và những gì code của bạn in ra sẽ không được hiển thị.
#
# ## Những gì được kiểm tra
#
# Công cụ tìm các lớp của bạn theo tên (`SelfAttention_v2`, `MHA`, `causal_attention`...), rồi
# theo tham số của chúng, dù được đặt tên như trong sách hay theo cách của bạn (`dim_in`,
# `embedding_dim`, `head_count`). Nó khởi tạo từng lớp với các đối số của sách, chạy trên sáu token
# của sách, và sao chép trọng số của lớp đó vào lớp có cùng vai trò trong gói (package), theo thứ tự bạn đã
# tạo chúng (query, key, value, rồi đến phép chiếu đầu ra), để so sánh đầu ra.
#
# | phép kiểm tra | đạt khi |
# | --- | --- |
# | `constructs` | lớp khởi tạo được với các đối số của sách |
# | `runs` | lớp chạy được trên đầu vào của sách (một chuỗi cho v1 và v2, một batch (lô) gồm hai chuỗi cho các lớp còn lại) |
# | `shape` | đầu ra có shape như trong sách |
# | `matches_book` | với cùng trọng số, đầu ra bằng đầu ra của sách với sai số 1e-5 |
# | `scale` | điểm chú ý (attention scores) được chia cho căn bậc hai của số chiều key |
# | `softmax_dim` | trọng số được chuẩn hóa theo các key |
# | `causal` | không đầu ra nào phụ thuộc vào một token đứng sau |
# | `diagonal` | mỗi token nhìn thấy chính nó |
# | `mask_buffer` | mask (mặt nạ) là một buffer (bộ đệm) đã được đăng ký |
# | `dropout` | dropout tác động lên trọng số chú ý (attention weights); chế độ eval cho kết quả tất định |
# | `heads` | mỗi head (đầu) là một attention một đầu với phần trọng số riêng của nó |
# | `out_proj` | phép chiếu đầu ra được áp dụng |
#
# Khi đầu ra khác nhau, công cụ kiểm tra tính lại kết quả của sách, mỗi lần chỉ thay đổi một điều
# (không chia tỉ lệ, softmax theo chiều kia, không có mask...). Thay đổi nào tái tạo được đầu ra của
# bạn sẽ chỉ ra phép kiểm tra bị trượt.
#
# ## Notebook của một người học
#
# Notebook này do một người học viết trong lúc đọc chương này bằng tiếng Trung. Nó định nghĩa một
# hàm attention và một lớp multi-head, kèm theo một lỗi mà nhiều người đọc mắc phải. Repository lưu
# nó trong `tests/fixtures/check/`. Đây là báo cáo mà nó nhận được, được tạo ra khi xây dựng trang
# này:

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
# `shape(-1)` gọi shape như một hàm: `torch.Size` là một tuple, nên phải dùng chỉ số, `shape[-1]`.
# Cả hai thành phần đều không chạy được chỉ vì một dòng đó, và không còn gì phía sau nó có thể kiểm
# tra được. Báo cáo cũng chỉ ra quy ước mask đang được dùng. `tril` đánh dấu các vị trí cần giữ, và
# `masked_fill(mask == 0, ...)` che các vị trí còn lại. Như vậy là nhất quán, nên đó không phải lỗi,
# nhưng nó ngược với mask của sách, vốn đánh dấu các vị trí cần che. Trang
# [Lỗi thường gặp](pitfalls.py) trình bày cả hai lỗi này.
#
# Sửa dòng đó, chạy lại công cụ kiểm tra, và mọi phép kiểm tra đều đạt. Mã thoát (exit status) là 0
# khi mọi thành phần đều đạt; là 1 khi có một phép kiểm tra bị trượt, khi các phép kiểm tra không
# chạy xong, hoặc khi các ô bị lỗi khiến không còn gì để kiểm tra; và là 2 khi không đọc được file.
