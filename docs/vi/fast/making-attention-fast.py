# %% [markdown] english="41ca522b4178"
# # Làm cho attention chạy nhanh
#
# Ngoài phạm vi sách. `MultiHeadAttention` của chương 3 được viết ra để dễ hiểu: ba phép chiếu, một
# ma trận điểm chú ý (attention scores) tường minh, một mask (mặt nạ), một softmax, một tích thứ
# hai. Các mô hình chạy thực tế (production) tính cùng một hàm đó, nhưng code của chúng trông khác.
# Trang này cho thấy mỗi thay đổi mang lại lợi ích gì, **được đo khi xây dựng trang này** trên chính
# máy đã xây dựng nó, nên các số đo thời gian bên dưới là của máy đó và thay đổi theo từng lần
# build. Để chạy benchmark đầy đủ ở kích thước GPT-2, hãy chạy `nox -s bench`.

# %%
import math
import platform

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)
from torch.utils import benchmark

from attention_mechanisms import (
    FusedMultiHeadAttention,
    KVCache,
    MultiHeadAttention,
    scaled_dot_product_attention,
    tiled_attention,
)
from attention_mechanisms.plotting import show_figure


def milliseconds(fn, min_run_time=0.3):
    """Median time of fn() in milliseconds, measured with torch.utils.benchmark."""
    fn()  # warm up
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn})
    return timer.blocked_autorange(min_run_time=min_run_time).median * 1e3


# %% nondeterministic="describes the machine that built the site"
print(f"{platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}")

# %% [markdown]
# ## Attention tốn bao nhiêu công việc
#
# Với một batch (lô) gồm $b$ chuỗi, mỗi chuỗi $T$ token, $h$ head (đầu) kích thước $d$, attention
# thực hiện hai tích ma trận cho mỗi head: $Q K^\top$ ($T \times d$ nhân $d \times T$) và $P V$
# ($T \times T$ nhân $T \times d$). Mỗi tích có $T^2 d$ phép nhân-cộng, tức là $2 T^2 d$ phép toán
# dấu phẩy động (FLOP), nên chi phí của attention là
#
# $$
# \text{FLOPs}_\text{attention} = 4 \, b \, h \, T^2 d ,
# $$
#
# và bằng một nửa chừng đó khi có causal mask, nếu cách cài đặt bỏ qua được nửa bị che. Bốn phép
# chiếu ($W_q$, $W_k$, $W_v$, $W_o$, mỗi ma trận $d_\text{model} \times d_\text{model}$) thêm
# $8 \, b \, T \, d_\text{model}^2$. Các phép chiếu tăng tuyến tính theo $T$, còn attention tăng
# theo bình phương:


# %%
def attention_flops(b, h, t, d, causal=False):
    flops = 4 * b * h * t * t * d
    return flops // 2 if causal else flops


def projection_flops(b, t, d_model):
    return 8 * b * t * d_model * d_model


for t in (256, 1024, 4096):
    attn = attention_flops(1, 12, t, 64) / 1e9
    proj = projection_flops(1, t, 768) / 1e9
    print(f"T={t:>5}: attention {attn:7.2f} GFLOP, projections {proj:6.2f} GFLOP")
# Out:
# T=  256: attention    0.20 GFLOP, projections   1.21 GFLOP
# T= 1024: attention    3.22 GFLOP, projections   4.83 GFLOP
# T= 4096: attention   51.54 GFLOP, projections  19.33 GFLOP

# %% [markdown]
# Ở ngữ cảnh 1024 token của GPT-2 small, các phép chiếu vẫn tốn nhiều hơn; ở 4096 token, attention
# tốn gấp hơn hai lần các phép chiếu. Bản thân ma trận điểm cũng phải được lưu lại:
# $b \cdot h \cdot T^2$ số, mà ở 4096 token và 12 head thì đã là 768 MiB với float32, chỉ cho một
# chuỗi:

# %%
for t in (256, 1024, 4096):
    print(f"T={t:>5}: one float32 score matrix for 12 heads = {12 * t * t * 4 / 2**20:8.1f} MiB")
# Out:
# T=  256: one float32 score matrix for 12 heads =      3.0 MiB
# T= 1024: one float32 score matrix for 12 heads =     48.0 MiB
# T= 4096: one float32 score matrix for 12 heads =    768.0 MiB

# %% [markdown]
# ## Ba cách tính cùng một thứ
#
# 1. **Lớp kiểu giáo khoa**, [`MultiHeadAttention`][attention_mechanisms.multihead.MultiHeadAttention]:
#    ba phép chiếu `nn.Linear`, sau đó là điểm, mask, softmax và tích với các value, mỗi bước là
#    một tensor riêng.
# 2. **Một phép chiếu duy nhất**: [`FusedMultiHeadAttention`][attention_mechanisms.fused.FusedMultiHeadAttention]
#    xếp chồng $W_q$, $W_k$, $W_v$ thành một `nn.Linear(d_in, 3 * d_out)`. Một tích ma trận lớn
#    giữ cho phần cứng bận rộn hơn so với ba tích nhỏ.
# 3. **Một kernel attention duy nhất**: cũng lớp đó gọi
#    `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`. PyTorch chọn một
#    cài đặt hợp nhất (fused), là FlashAttention trên các GPU đời mới và một kernel kiểu
#    FlashAttention trên CPU, áp dụng mask, softmax và cả hai tích theo từng khối, mà không bao giờ
#    lưu ma trận $T \times T$.
#
# Các lớp này tính cùng một hàm. `from_multihead_attention` sao chép trọng số của một module kiểu
# giáo khoa sang một module hợp nhất, và `torch.nn.MultiheadAttention` của chính PyTorch cũng có
# thể chứa các trọng số đó: `in_proj_weight` của nó là ba ma trận chiếu xếp chồng lên nhau, giống
# như của module hợp nhất, và các phép chiếu kiểu giáo khoa không có bias:

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
fused = FusedMultiHeadAttention.from_multihead_attention(mha)
x = torch.randn(2, 256, 768)
torch_mha = torch.nn.MultiheadAttention(768, 12, batch_first=True).eval()
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(fused.qkv.weight)
    torch_mha.in_proj_bias.zero_()
    torch_mha.out_proj.load_state_dict(mha.out_proj.state_dict())
    hide = mha.mask.bool()[:256, :256]  # like the book's mask, True marks a hidden position
    reference = mha(x)
    print("fused agrees to 1e-5:", (fused(x) - reference).abs().max().item() < 1e-5)
    torch_out, _ = torch_mha(x, x, x, attn_mask=hide, need_weights=False)
    print("torch.nn agrees to 1e-5:", (torch_out - reference).abs().max().item() < 1e-5)
print(
    "same parameter count:",
    sum(p.numel() for p in fused.parameters()) == sum(p.numel() for p in mha.parameters()),
)
# Out:
# fused agrees to 1e-5: True
# torch.nn agrees to 1e-5: True
# same parameter count: True

# %% [markdown]
# ### Kết quả đo
#
# Một shape nhỏ hơn shape của GPT-2 giúp việc xây dựng trang này nhanh gọn: 4 chuỗi gồm 512 token,
# 768 chiều, 12 head, float32, chỉ có lượt forward, mọi module đều ở chế độ đánh giá (evaluation
# mode) (`torch.nn.MultiheadAttention` chỉ đi theo đường chạy nhanh dành cho suy luận ở chế độ
# đó).

# %% nondeterministic="timings depend on the machine that builds the site"
b, t, d_model, heads = 4, 512, 768, 12
x = torch.randn(b, t, d_model)
hide = mha.mask.bool()[:t, :t]
for module in (mha, fused, torch_mha):
    module.eval()
candidates = {
    "MultiHeadAttention (textbook)": lambda: mha(x),
    "FusedMultiHeadAttention": lambda: fused(x),
    "torch.nn.MultiheadAttention": lambda: torch_mha(x, x, x, attn_mask=hide, need_weights=False),
}
flops = attention_flops(b, heads, t, d_model // heads) + projection_flops(b, t, d_model)
times = {}
with torch.no_grad():
    for name, fn in candidates.items():
        times[name] = milliseconds(fn)
        print(f"{name:<31} {times[name]:7.1f} ms  {flops / times[name] / 1e6:6.1f} GFLOP/s")
print(
    f"textbook / fused: {times['MultiHeadAttention (textbook)'] / times['FusedMultiHeadAttention']:.1f}x"
)
print("fastest:", min(times, key=times.get))

# %% [markdown]
# GFLOP/s ở đây tính theo toàn bộ số FLOP của attention, như thể không có gì bị bỏ qua. Một kernel
# nhân quả bỏ qua nửa bị che thì làm ít việc hơn con số đếm đó, nên con số GFLOP/s của nó phóng
# đại tốc độ tính toán thực sự.
#
# ## Vì sao kernel hợp nhất cần ít bộ nhớ hơn
#
# Chỉ riêng bước attention, không tính các phép chiếu, khi chuỗi dài dần (một chuỗi, 12 head kích
# thước 64): bước kiểu giáo khoa lưu toàn bộ ma trận điểm, còn bước hợp nhất và bước chia khối
# (tiled) thì không, nên chỉ hai bước này mới có thể tiếp tục lên những ngữ cảnh dài mà không hết
# bộ nhớ. Những dòng cuối so sánh bước chia khối với bước kiểu giáo khoa và cho biết bước nào nhanh
# nhất ở mỗi độ dài, trên máy đã xây dựng trang này.


# %% nondeterministic="timings depend on the machine that builds the site"
def textbook_step(q, k, v):
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)).masked_fill(
        torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1), -torch.inf
    )
    return torch.softmax(scores / q.shape[-1] ** 0.5, dim=-1) @ v


steps = {
    "textbook": textbook_step,
    "fused (SDPA)": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "tiled (pure PyTorch)": lambda q, k, v: tiled_attention(q, k, v, causal=True, block_size=256),
}
lengths = [256, 512, 1024, 2048]
step_times = {name: [] for name in steps}
with torch.no_grad():
    for t in lengths:
        q, k, v = torch.randn(3, 1, 12, t, 64).unbind(0)
        for name, step in steps.items():
            step_times[name].append(
                milliseconds(lambda step=step, q=q, k=k, v=v: step(q, k, v), 0.2)
            )
        print(f"T={t:>5}: " + ", ".join(f"{n} {step_times[n][-1]:7.2f} ms" for n in steps))
tiled_times = step_times["tiled (pure PyTorch)"]
tiled_share = {t: tiled_times[i] / step_times["textbook"][i] for i, t in enumerate(lengths)}
print("tiled / textbook time:", ", ".join(f"{t}: {r:.2f}" for t, r in tiled_share.items()))
fastest = {t: min(steps, key=lambda n, i=i: step_times[n][i]) for i, t in enumerate(lengths)}
print("fastest at each length:", ", ".join(f"{t}: {n}" for t, n in fastest.items()))

# %% nondeterministic="a plot of the timings above" caption="Hình 7. Chỉ riêng bước attention khi chuỗi dài dần: thời gian đo khi xây dựng trang này (bên trái), bộ nhớ tính từ shape của các tensor (bên phải)." alt="Hai biểu đồ đường, cả hai trục đều theo thang logarit. Bên trái: thời gian của bước attention với từ 256 đến 2048 token cho các cài đặt kiểu giáo khoa, hợp nhất và chia khối; tất cả đều tăng mạnh theo số token; cài đặt nhanh nhất ở mỗi độ dài được in ở dòng cuối của ô đo thời gian phía trên. Bên phải: bộ nhớ mà bước này phải giữ, tăng theo bình phương số token với bước kiểu giáo khoa và tăng tuyến tính với bước hợp nhất."
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for name, values in step_times.items():
    left.plot(lengths, values, marker="o", label=name)
left.set(xscale="log", yscale="log", xlabel="tokens", ylabel="milliseconds", title="Time")
left.set_xticks(lengths, [str(t) for t in lengths])
left.minorticks_off()
left.legend()
right.plot(
    lengths, [12 * t * t * 4 / 2**20 for t in lengths], marker="o", label="textbook: T x T scores"
)
right.plot(
    lengths, [3 * 12 * t * 64 * 4 / 2**20 for t in lengths], marker="o", label="fused: q, k, v only"
)
right.set(
    xscale="log", yscale="log", xlabel="tokens", ylabel="MiB", title="Memory the step must hold"
)
right.set_xticks(lengths, [str(t) for t in lengths])
right.minorticks_off()
right.legend()
show_figure(
    fig,
    caption=(
        "Figure 7. The attention step alone as the sequence grows: time measured when this "
        "page was built (left), memory computed from the tensor shapes (right)."
    ),
    alt=(
        "Two log-log line charts. Left: time of the attention step for 256 to 2048 tokens "
        "for the textbook, fused and tiled implementations; all rise steeply with the "
        f"number of tokens; fastest at each length: {', '.join(fastest.values())}. "
        "Right: memory the step must hold, growing with the square of the tokens for the "
        "textbook step and linearly for the fused one."
    ),
)

# %% [markdown]
# ## Thuật toán chia khối, từng bước một
#
# Làm sao có thể tính softmax mà không cần toàn bộ các điểm của một hàng cùng lúc? Hàm
# [`tiled_attention`][attention_mechanisms.tiled.tiled_attention] làm theo FlashAttention: nó duyệt
# qua các key từng khối một và, với mỗi hàng query, duy trì ba đại lượng được cập nhật dần: điểm
# lớn nhất tính đến lúc đó $m$, tổng $\ell = \sum_j e^{s_j - m}$, và đầu ra chưa chuẩn hóa
# $o = \sum_j e^{s_j - m} v_j$. Khi một khối mới nâng giá trị lớn nhất từ $m$ lên $m'$, mọi thứ đã
# tích lũy đến lúc đó được nhân lại với $e^{m - m'}$.
#
# Đây là một hàng query trên tám key, chia thành hai khối, mỗi khối bốn key. Điểm lớn nhất, 2.5,
# nằm ở khối thứ hai, nên khối đó nâng giá trị lớn nhất lên và các tổng của khối đầu tiên co lại:

# %%
scores = torch.tensor([0.5, 1.2, -0.3, 0.8, 2.5, -1.0, 0.1, 1.9])  # one query, 8 keys
torch.manual_seed(0)
values = torch.randn(8, 3)

m, ell, o = -math.inf, 0.0, torch.zeros(3)
for start in (0, 4):
    s, v = scores[start : start + 4], values[start : start + 4]
    m_new = max(m, s.max().item())
    rescale = math.exp(m - m_new)  # shrink what was summed under the old maximum
    p = torch.exp(s - m_new)
    ell = rescale * ell + p.sum().item()
    o = rescale * o + p @ v
    m = m_new
    print(f"keys {start}-{start + 3}: m = {m:.4f}, rescale = {rescale:.4f}, l = {ell:.4f}")

print("online:  ", o / ell)
print("one pass:", torch.softmax(scores, dim=0) @ values)
# Out:
# keys 0-3: m = 1.2000, rescale = 0.0000, l = 2.3900
# keys 4-7: m = 2.5000, rescale = 0.2725, l = 2.3211
# online:   tensor([-0.0863,  0.2827, -0.4691])
# one pass: tensor([-0.0863,  0.2827, -0.4691])

# %% [markdown]
# Khối đầu tiên bắt đầu từ $m = -\infty$, nên hệ số điều chỉnh (rescale) của nó là
# $e^{-\infty} = 0$: chưa có gì để co lại. Khối thứ hai nâng $m$ từ 1.2 lên 2.5, và $\ell$ cùng
# $o$ của khối đầu tiên được nhân với $e^{1.2 - 2.5} \approx 0.2725$ trước khi cộng thêm các số
# hạng của khối thứ hai. Kết quả tính trực tuyến (online) và kết quả tính một lượt khớp nhau đến
# từng chữ số được in ra. Cùng đoạn code đó, nhưng với cả khối query và bỏ qua những key nằm hoàn
# toàn ở tương lai của một khối query, chính là `tiled_attention`; nó khớp với attention thông
# thường đến sai số 1e-12 ở float64, dù có nhân quả hay không:

# %%
q, k, v = torch.randn(3, 2, 12, 300, 64, dtype=torch.float64).unbind(0)
for causal in (False, True):
    reference, _ = scaled_dot_product_attention(q, k, v, causal=causal)
    tiled = tiled_attention(q, k, v, causal=causal, block_size=64)
    print(f"causal={causal}: equal to 1e-12:", torch.allclose(tiled, reference, rtol=0, atol=1e-12))
# Out:
# causal=False: equal to 1e-12: True
# causal=True: equal to 1e-12: True

# %% [markdown]
# Khi viết bằng Python, dạng chia khối phải trả giá cho các vòng lặp của nó: mỗi khối là một tích
# ma trận nhỏ riêng biệt được khởi chạy từ trình thông dịch. Các kernel hợp nhất chạy cùng thuật
# toán đó bên trong một kernel GPU hoặc CPU duy nhất, nơi mỗi khối nằm trong bộ nhớ nhanh trên
# chip: đó là điều làm cho FlashAttention nhanh. Tuy vậy, ngay cả phiên bản Python cũng không bao
# giờ ghi ma trận $T \times T$ ra bộ nhớ, và điều đó càng quan trọng khi chuỗi càng dài: các số đo
# thời gian ở trên cho thấy hai loại chi phí này cân bằng với nhau ra sao trên máy đã xây dựng
# trang này.
#
# ## KV cache
#
# Một mô hình ngôn ngữ sinh ra lần lượt từng token. Nếu không có cache, bước $t$ lại chạy attention
# trên toàn bộ $t$ token, dù key và value của $t - 1$ token đầu tiên không hề thay đổi. Một
# **KV cache** (bộ nhớ đệm key-value) giữ lại chúng: mỗi bước chỉ chiếu token mới và tính attention
# với một query duy nhất đối với các key đã lưu trong cache. Vì token mới nằm ở vị trí *cuối cùng*,
# nó được phép nhìn thấy mọi key trong cache.
#
# [`KVCache`][attention_mechanisms.fused.KVCache] làm việc này cho module hợp nhất. Đưa vào các
# token lần lượt từng cái một cho ra cùng đầu ra như một lượt chạy đầy đủ:

# %%
torch.manual_seed(1)
fused_small = FusedMultiHeadAttention(64, 64, context_length=128, dropout=0.0, num_heads=4)
sequence = torch.randn(1, 40, 64)
with torch.no_grad():
    full = fused_small(sequence)
    cache = KVCache()
    steps_out = [fused_small(sequence[:, i : i + 1], kv_cache=cache) for i in range(40)]
print("cached positions:", len(cache))
print("same outputs:", torch.allclose(torch.cat(steps_out, dim=1), full, atol=1e-6))
# Out:
# cached positions: 40
# same outputs: True

# %% [markdown]
# Phần tiết kiệm được: sinh $n$ token mà không có cache thì phải xử lý lại $1 + 2 + \dots + n$
# vị trí; có cache thì chỉ $n$.

# %% nondeterministic="timings depend on the machine that builds the site"
n = 256
tokens = torch.randn(1, n, 768)
with torch.no_grad():
    fused.eval()

    def without_cache():
        for i in range(1, n + 1):
            fused(tokens[:, :i])

    def with_cache():
        cache = KVCache()
        for i in range(n):
            fused(tokens[:, i : i + 1], kv_cache=cache)

    slow, quick = milliseconds(without_cache, 0.5), milliseconds(with_cache, 0.5)
print(
    f"{n} tokens one by one: {slow:.0f} ms without a cache, {quick:.0f} ms with one ({slow / quick:.1f}x)"
)

# %% [markdown]
# ## Tóm lại
#
# | thay đổi | tiết kiệm được gì |
# | --- | --- |
# | một phép chiếu QKV | ba tích ma trận trở thành một tích lớn hơn, tận dụng phần cứng tốt hơn |
# | kernel attention hợp nhất | không có ma trận $T \times T$ trong bộ nhớ; mask, softmax và các tích trong một lượt |
# | bỏ qua nửa bị che bởi causal mask | một nửa số FLOP của attention |
# | KV cache | khi sinh văn bản, công việc cho mỗi token mới tỉ lệ với độ dài ngữ cảnh, không phải với bình phương của nó |
#
# Không thay đổi nào trong số đó làm thay đổi hàm được tính: với cùng trọng số, mọi module trên
# trang này đều cho ra đầu ra của module kiểu giáo khoa, sai khác chỉ do làm tròn (đến 1e-5 ở
# trên), và các bài kiểm thử của gói (package) kiểm tra rằng điều đó đúng.
