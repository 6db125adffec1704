# %% [markdown] english="9d543dbd2367"
# # Self-attention đơn giản hóa
#
# Mục 3.3 của sách: chú ý đến các phần khác nhau của đầu vào bằng self-attention (tự chú ý), trước
# hết là khi chưa có trọng số huấn luyện được (trainable weights) nào, để bạn có thể tự tay lần
# theo từng con số.
#
# Mục tiêu của self-attention là tính, cho mỗi token $x^{(i)}$, một **vector ngữ cảnh** (context
# vector) $z^{(i)}$: một hỗn hợp của tất cả các vector đầu vào, mỗi vector được đánh trọng số theo
# mức độ liên quan của nó với token $i$. Ta xây dựng nó qua ba bước:
#
# 1. **điểm chú ý** (attention scores) $\omega_{ij}$: token $j$ giống token $i$ đến mức nào;
# 2. **trọng số chú ý** (attention weights) $\alpha_{ij}$: các điểm đã được chuẩn hóa sao cho mỗi
#    hàng có tổng bằng 1;
# 3. **vector ngữ cảnh** $z^{(i)} = \sum_j \alpha_{ij} x^{(j)}$.

# %%
import torch

from attention_mechanisms import (
    attention_scores,
    attention_scores_loop,
    attention_weights,
    context_vector,
    context_vectors,
    query_scores_loop,
    softmax_stable,
)
from attention_mechanisms.plotting import show_attention

tokens = ["Your", "journey", "starts", "with", "one", "step"]
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

# %% [markdown]
# ## 3.3.1 Một cơ chế self-attention đơn giản không có trọng số huấn luyện được
#
# Lấy token thứ hai, "journey", làm **query** (truy vấn). Điểm chú ý của nó với mỗi token
# $x^{(j)}$ là tích vô hướng (dot product) $\omega_{2j} = x^{(2)} \cdot x^{(j)}$: tổng của các
# tích từng cặp phần tử. Tích vô hướng lớn khi hai vector chỉ về những hướng gần giống nhau, nên
# nó dùng được như một thước đo độ tương đồng.

# %%
query = inputs[1]  # "journey", x^(2)

attn_scores_2 = torch.empty(inputs.shape[0])
for j, x_j in enumerate(inputs):
    attn_scores_2[j] = torch.dot(query, x_j)  # omega_2j
print(attn_scores_2)
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# Hàm [`query_scores_loop`][attention_mechanisms.simple.query_scores_loop] của gói (package) chính là
# vòng lặp đó, và cho ra đúng những con số ấy:

# %%
print(query_scores_loop(query, inputs))
# Out:
# tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

# %% [markdown]
# "journey" có điểm cao nhất với chính nó (1.4950) và với "starts" (1.4754), token có embedding
# (vector nhúng) gần như giống hệt.
#
# Tổng của các điểm không bằng một giá trị cụ thể nào cả. Ý tưởng đầu tiên để biến chúng thành
# trọng số là chia cho tổng của chúng:

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
print("Attention weights:", attn_weights_2_tmp)
print("Sum:", attn_weights_2_tmp.sum())
# Out:
# Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
# Sum: tensor(1.0000)

# %% [markdown]
# Tổng đúng là bằng 1, nhưng cách này sẽ biến một điểm âm thành một trọng số âm. Thay vào đó,
# hàm **softmax** là lựa chọn tiêu chuẩn:
#
# $$
# \alpha_{2j} = \operatorname{softmax}(\omega_2)_j = \frac{e^{\omega_{2j}}}{\sum_k e^{\omega_{2k}}}
# $$
#
# Mọi trọng số đều dương, tổng của chúng bằng 1, và điểm càng lớn thì nhận được phần trọng số
# càng lớn, vượt hẳn tỉ lệ của nó. Viết đúng y như công thức, hàm này chỉ gồm một dòng:


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


attn_weights_2_naive = softmax_naive(attn_scores_2)
print("Attention weights:", attn_weights_2_naive)
print("Sum:", attn_weights_2_naive.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# ### Khi nào softmax naive (tính thẳng theo định nghĩa) bị hỏng
#
# $e^x$ tăng rất nhanh. Trong float32, số lớn nhất vào khoảng $3.4 \times 10^{38}$, và
# $e^{89}$ đã lớn hơn số đó. Khi ấy cả tử số lẫn mẫu số đều là vô cùng, và $\infty / \infty$ là
# "not a number" (không phải là một số, NaN):

# %%
big_scores = torch.tensor([100.0, 1.0, 0.0])
print("naive: ", softmax_naive(big_scores))
print("stable:", softmax_stable(big_scores))
print("torch: ", torch.softmax(big_scores, dim=0))
# Out:
# naive:  tensor([nan, 0., 0.])
# stable: tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])
# torch:  tensor([1.0000e+00, 1.0089e-43, 3.7835e-44])

# %% [markdown]
# Phiên bản ổn định trừ đi điểm lớn nhất $m$ trước khi lấy lũy thừa. Thừa số $e^{-m}$ triệt tiêu
# giữa tử số và mẫu số, nên kết quả không đổi, nhưng giờ đây mọi số mũ đều không vượt quá 0:
#
# $$
# \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k
# $$
#
# `torch.softmax` làm việc này ở bên trong, và
# [`softmax_stable`][attention_mechanisms.simple.softmax_stable] cùng mọi hàm khác trong gói cũng
# vậy. Trong code của bạn, hãy dùng `torch.softmax`:

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
print("Attention weights:", attn_weights_2)
print("Sum:", attn_weights_2.sum())
# Out:
# Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
# Sum: tensor(1.)

# %% [markdown]
# Bước cuối cùng nhân mỗi vector đầu vào với trọng số của nó rồi cộng tất cả lại:
# $z^{(2)} = \sum_j \alpha_{2j} x^{(j)}$.

# %%
context_vec_2 = torch.zeros(query.shape)
for j, x_j in enumerate(inputs):
    context_vec_2 += attn_weights_2[j] * x_j
print(context_vec_2)
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# [`context_vector`][attention_mechanisms.simple.context_vector] đóng gói vòng lặp đó:

# %%
print(context_vector(attn_weights_2, inputs))
# Out:
# tensor([0.4419, 0.6515, 0.5683])

# %% [markdown]
# ## 3.3.2 Tính trọng số chú ý cho mọi token đầu vào
#
# Bây giờ lần lượt từng token sẽ đóng vai query. Với hai vòng lặp, các điểm tạo thành một ma trận
# $6 \times 6$, trong đó hàng $i$ chứa các điểm của query $i$:

# %%
attn_scores = torch.empty(6, 6)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores[i, j] = torch.dot(x_i, x_j)
print(attn_scores)
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])

# %% [markdown]
# Phần tử $(i, j)$ là tích vô hướng của hàng $i$ với hàng $j$, và đó chính xác là thứ mà tích ma
# trận $X X^\top$ tính ra, chỉ trong một lần gọi và nhanh hơn nhiều:

# %%
attn_scores = inputs @ inputs.T
print(attn_scores)
print(torch.allclose(attn_scores, attention_scores_loop(inputs)))
# Out:
# tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
#         [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
#         [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
#         [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
#         [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
#         [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])
# True

# %% [markdown]
# Softmax theo từng hàng (`dim=-1`, chiều cuối cùng) biến các điểm thành trọng số; mỗi hàng có
# tổng bằng 1:

# %%
attn_weights = torch.softmax(attn_scores, dim=-1)
print(attn_weights)
print("row sums:", attn_weights.sum(dim=-1))
# Out:
# tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
#         [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
#         [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
#         [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
#         [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
#         [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
# row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])

# %% [markdown]
# Hình dưới đây biểu diễn chính ma trận đó. Mỗi hàng là một query; ô càng đậm là token mà query
# đó lấy thông tin càng nhiều.

# %% caption="Hình 1. Trọng số chú ý của self-attention đơn giản hóa (không có trọng số huấn luyện được)." alt="Bản đồ nhiệt của một ma trận 6 nhân 6 gồm các trọng số chú ý giữa các token Your, journey, starts, with, one, step. Mỗi hàng có tổng bằng 1. Các trọng số phân bố khá đều, trong khoảng từ 0.10 đến 0.24; journey và starts chú ý nhiều nhất đến nhau và đến chính mình, mỗi trọng số khoảng 0.23."
show_attention(
    attn_weights,
    tokens,
    caption="Figure 1. Attention weights of simplified self-attention (no trainable weights).",
    alt=(
        "Heatmap of a 6 by 6 matrix of attention weights between the tokens Your, journey, "
        "starts, with, one, step. Every row sums to 1. Weights are spread fairly evenly, "
        "between 0.10 and 0.24; journey and starts attend most to each other and to "
        "themselves, about 0.23 each."
    ),
)
# Out:
# AttentionFigure('Figure 1. Attention weights of simplified self-attention (no trainable weights).')

# %% [markdown]
# Cuối cùng, tính tất cả các vector ngữ cảnh cùng lúc: hàng $i$ của $A X$ là
# $\sum_j \alpha_{ij} x^{(j)}$, tức là vòng lặp ở trên áp dụng cho query $i$.

# %%
all_context_vecs = attn_weights @ inputs
print(all_context_vecs)
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# Hàng thứ hai, $z^{(2)}$, chính là vector ngữ cảnh mà ta đã tính bằng vòng lặp ở mục 3.3.1. Gói
# cho ra cùng ma trận đó, dù tính từng bước hay chỉ bằng một lần gọi:

# %%
print(context_vectors(attention_weights(attention_scores(inputs)), inputs))
# Out:
# tensor([[0.4421, 0.5931, 0.5790],
#         [0.4419, 0.6515, 0.5683],
#         [0.4431, 0.6496, 0.5671],
#         [0.4304, 0.6298, 0.5510],
#         [0.4671, 0.5910, 0.5266],
#         [0.4177, 0.6503, 0.5645]])

# %% [markdown]
# Ở đây không có gì được học cả: các trọng số đến thẳng từ các embedding. Trang tiếp theo trao cho
# mô hình ba ma trận huấn luyện được, để nó có thể học *cái gì* cần được chú ý đến.
