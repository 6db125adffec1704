# %% [markdown] english="fac5074196f2"
# # Vì sao cần attention
#
# Mục 3.1 và 3.2 của sách: vấn đề khi mô hình hóa các chuỗi dài, và cách attention (cơ chế
# chú ý) cho phép mô hình nhìn lại mọi phần của đầu vào.
#
# ## 3.1 Vấn đề khi mô hình hóa các chuỗi dài
#
# Dịch một câu theo kiểu từng từ một thì không ổn: mỗi ngôn ngữ sắp xếp từ theo một trật tự
# khác nhau, và cách dịch đúng của một từ thường phụ thuộc vào những từ nằm cách xa nó. Một mô
# hình dịch phải đọc hết cả câu rồi mới được viết ra bất cứ thứ gì.
#
# Trước khi có transformer, thiết kế phổ biến là **mạng nơ-ron hồi quy (RNN) dạng
# encoder-decoder**. Encoder (bộ mã hóa) đọc đầu vào lần lượt từng token và duy trì một *trạng
# thái ẩn* (hidden state), tức là một vector được cập nhật sau mỗi token. Khi đầu vào kết thúc,
# trạng thái ẩn cuối cùng ấy được chuyển cho decoder (bộ giải mã), và decoder dựa vào nó để sinh
# ra đầu ra, lần lượt từng token.
#
# Điểm yếu nằm ở chính bước bàn giao đó: dù đầu vào dài đến đâu, decoder cũng chỉ nhận được một
# vector có kích thước cố định. Hãy xem điều này với một RNN nhỏ của PyTorch trên câu sáu token
# của chúng ta.

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
# Encoder đã tính ra sáu trạng thái ẩn, mỗi trạng thái ứng với một token, nhưng một decoder cổ
# điển chỉ nhìn thấy trạng thái cuối cùng: bốn con số phải tóm tắt được cả câu. Với một câu sáu
# mươi token, đó vẫn chỉ là bốn con số. Thông tin về những token đầu tiên phải sống sót qua mọi
# lần cập nhật về sau, và qua những khoảng cách dài, nó mờ dần đi.

# %% [markdown]
# ## 3.2 Nắm bắt sự phụ thuộc trong dữ liệu bằng cơ chế attention
#
# Năm 2014, Bahdanau, Cho và Bengio đã thay đổi bước bàn giao này: ở mỗi bước sinh đầu ra,
# decoder được phép nhìn vào **tất cả** các trạng thái ẩn của encoder và quyết định xem mỗi trạng
# thái quan trọng đến mức nào ngay lúc này. Những con số "đến mức nào" đó chính là **trọng số chú
# ý** (attention weights): không âm, mỗi vị trí đầu vào có một số, và tổng của chúng bằng 1. Sau
# đó decoder làm việc với trung bình có trọng số của các trạng thái, tức là một **vector ngữ
# cảnh** (context vector) được tạo riêng cho bước này.
#
# Dưới đây là ý tưởng đó gói gọn trong vài dòng, với một trạng thái decoder tự đặt ra làm *query*
# (truy vấn). Độ tương đồng giữa query và từng trạng thái của encoder là một tích vô hướng (dot
# product), và softmax biến sáu độ tương đồng đó thành các trọng số.

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
# Ba năm sau, bài báo *Attention Is All You Need* (Vaswani và cộng sự, 2017) bỏ hẳn cơ chế hồi
# quy. Trong một transformer, mỗi token của một chuỗi chú ý đến các token của **chính** chuỗi đó.
# Đó là **self-attention** (tự chú ý), và đó là thứ mà phần còn lại của chương này sẽ xây dựng:
#
# - [Self-attention đơn giản hóa](02-simple-self-attention.py): điểm chú ý (attention scores),
#   trọng số chú ý và vector ngữ cảnh, hoàn toàn không có trọng số huấn luyện được (trainable
#   weights).
# - [Self-attention với trọng số huấn luyện được](03-trainable-self-attention.py): scaled
#   dot-product attention (attention tích vô hướng có chia tỉ lệ), loại attention được dùng trong
#   GPT.
# - [Causal attention](04-causal-attention.py): một token chỉ được nhìn các token đứng trước nó,
#   và chính điều này cho phép mô hình sinh văn bản lần lượt từng token.
# - [Multi-head attention](05-multi-head-attention.py): nhiều cơ chế attention chạy song song,
#   cạnh nhau.
