# %% [markdown]
# # RoPE beyond the training length
#
# Beyond the book. [Rotary position embeddings](rotary-position-embeddings.py) turn each
# pair of a head's features by an angle that grows with the position, at a speed set by
# the base of the angles. This page shows how the base is chosen, and how Llama 3.1 and
# three other methods change the speeds so that a model reads past the length it was
# trained on.

# %%
import math

import matplotlib.pyplot as plt
import torch

from attention_mechanisms import apply_rope, compute_rope_params
from attention_mechanisms.plotting import show_figure

# %% [markdown]
# ## Choosing the base
#
# The base sets the slowest speed: the last pair turns by $\text{theta\_base}^{-(d-2)/d}$
# radians per position. Within one turn, that pair's angle grows steadily with the distance
# between two tokens, a coarse measure of how far apart they are; past one turn it comes
# round again, and by then every faster pair has come round too. A larger base slows the
# slow pairs and pushes that turn further out, so that distances stay apart over a longer
# context. Published models choose different bases:
#
# - Llama 2 keeps 10,000, the base of the RoFormer paper (Su et al., 2021): Meta's reference
#   code computes its angles with `precompute_freqs_cis` in `llama/model.py`, whose
#   `theta` is 10000.0 unless given.
# - Llama 3 raises it to 500,000: "This enables us to better support longer contexts;
#   Xiong et al. (2023) showed this value to be effective for context lengths up to
#   32,768" (the Llama 3 paper, Dubey et al., 2024, section 3.2).
# - Gemma 3 uses two: it raises the base "from 10k to 1M on global self-attention layers,
#   and keep[s] the frequency of the local layers at 10k" (the Gemma 3 technical report,
#   Gemma Team, 2025, section 2, "Long context"). Its local layers look back only one
#   window ([Sliding-window attention](sliding-window-attention.py)); only the global
#   layers see the whole context.
#
# For a head of 128 features (`head_dim` 128 in the `config.json` of Llama 3 8B and of
# Gemma 3 27B), the slowest pair of each base, from `compute_rope_params`: how many
# positions one turn takes, and how many turns it makes over 32,768 and 131,072 (128K)
# positions:

# %%
bases = {
    "Llama 2; Gemma 3, local layers": 10_000,
    "Llama 3": 500_000,
    "Gemma 3, global layers": 1_000_000,
}
header = f"{'theta_base':>10}{'positions per turn':>20}{'turns in 32,768':>17}{'in 131,072':>12}"
print(f"{header}  used by")
for label, base in bases.items():
    cos, sin = compute_rope_params(128, theta_base=base, context_length=2)
    slowest = torch.atan2(sin[1, 63], cos[1, 63]).item()  # theta_63, radians per position
    wavelength = 2 * math.pi / slowest  # positions per full turn
    turns = f"{32_768 / wavelength:>17.3f}{131_072 / wavelength:>12.3f}"
    print(f"{base:>10,}{wavelength:>20,.0f}{turns}  {label}")
# Out:
# theta_base  positions per turn  turns in 32,768  in 131,072  used by
#     10,000              54,410            0.602       2.409  Llama 2; Gemma 3, local layers
#    500,000           2,559,196            0.013       0.051  Llama 3
#  1,000,000           5,063,256            0.006       0.026  Gemma 3, global layers

# %% [markdown]
# With base 10,000 the slowest pair turns more than twice over 128K positions; with
# Llama 3's or Gemma 3's global base, it covers a small part of one turn. Llama 3 and
# Gemma 3 are trained with their larger bases; the next section changes the speeds of a
# model that is already trained, and one of its methods does so by changing the base.
#
# ## Longer contexts: rescaling the speeds
#
# A model sees, in training, the angles of the positions it is trained on. A pair that
# turns many times within that context has met every angle; a slow pair has met only a
# small arc, and past the trained length it reaches angles the model has never seen. That
# is RoPE's cost in quality: attention degrades past the context it was trained on, and
# growing the context means changing the angles.
#
# Llama 3.1 reads 128K tokens where Llama 3 read 8,192. The Llama 3 paper (Dubey et al.,
# 2024, section 3.4.2) describes the training: pre-training goes on with ever longer
# sequences, in six stages from the original 8K context to 128K for Llama 3 405B, each
# until short-context results have recovered and "needle in a haystack" tasks are solved
# up to that length. The rescaling of the speeds is in the released configuration and
# code: the `rope_scaling` of Meta's `config.json` for Llama 3.1 8B, `factor` 8,
# `low_freq_factor` 1, `high_freq_factor` 4 and `original_max_position_embeddings` 8192.
# The book's bonus code passes these to `compute_rope_params` as `freq_config` (with the
# last key named `original_context_length`), and so does this package:
#
# - a pair that turns fewer than `low_freq_factor` times in the original 8,192 positions
#   (a wavelength above 8,192 positions) is slowed down by `factor`, so that the longer
#   context stays within angles the model has seen;
# - a pair that turns more than `high_freq_factor` times (a wavelength below 2,048) keeps its
#   speed: it measures short distances, which do not change with the length of the text;
# - the pairs between are blended from one to the other, in proportion to how often they
#   turn.

# %%
freq_config = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_context_length": 8192,
}
cos, sin = compute_rope_params(128, theta_base=500_000, context_length=2)
cos31, sin31 = compute_rope_params(128, 500_000, 2, freq_config)
before = torch.atan2(sin[1, :64], cos[1, :64])  # theta_k: the angle at position 1
after = torch.atan2(sin31[1, :64], cos31[1, :64])
ratio = before / after
print("pairs that keep their speed:", (ratio == 1).sum().item())
print("pairs slowed by 8:", torch.isclose(ratio, torch.tensor(8.0)).sum().item())
print("pairs blended:", ((ratio > 1) & ~torch.isclose(ratio, torch.tensor(8.0))).sum().item())
# Out:
# pairs that keep their speed: 29
# pairs slowed by 8: 29
# pairs blended: 6

# %%
wavelength = 2 * torch.pi / before  # positions per full turn
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
ax.plot(wavelength, before, marker=".", label="Llama 3 (no scaling)")
ax.plot(wavelength, after, marker=".", label="Llama 3.1 (freq_config)")
for edge in (2048, 8192):
    ax.axvline(edge, color="0.5", linestyle="--", linewidth=1)
ax.set(xscale="log", yscale="log", xlabel="wavelength before scaling, positions per turn")
ax.set(ylabel=r"$\theta_k$, radians per position")
ax.legend(loc="upper right", framealpha=1)
show_figure(
    fig,
    caption="Figure 1. The 64 speeds of a Llama 3 head before and after Llama 3.1's rescaling.",
    alt=(
        "A log-log chart of each pair's speed against its wavelength before scaling. The "
        "two lines coincide for wavelengths below 2,048 positions (a dashed line), the "
        "scaled line bends away between 2,048 and 8,192 (a second dashed line), and beyond "
        "8,192 it runs parallel to the unscaled one, eight times lower."
    ),
)
# Out:
# AttentionFigure("Figure 1. The 64 speeds of a Llama 3 head before and after Llama 3.1's rescaling.")

# %% [markdown]
# ## Four ways to rescale
#
# Llama 3.1's rescaling is one of several. Each slows some of the speeds $\theta_k$, so
# that a context `factor` ($s$) times the original one ($L$) reaches fewer angles unseen in
# training; they differ in which pairs they slow down, and by how much.
# `compute_rope_params` takes four, named by the `rope_type` of `freq_config`, each with
# `factor` and `original_context_length`; the module
# [`rope_scaling`][attention_mechanisms.rope_scaling] writes them out.
#
# - `"linear"`, Position Interpolation (Chen, Wong, Chen and Tian, 2023, section 2.3):
#   every pair is slowed by $s$, $\theta_k' = \theta_k / s$. Position $m$ is turned as
#   position $m/s$ was: the longer text is squeezed into the positions of the original one,
#   and the model is then fine-tuned briefly (abstract). The fastest pair is slowed too: two
#   neighbours now differ by an eighth of the angle they differed by in training.
# - `"ntk"`, "NTK-aware" scaling (a 2023 post by bloc97, as the YaRN paper credits it): the
#   base changes instead, to $\text{theta\_base} \cdot s^{d/(d-2)}$. The exponent makes the
#   slowest pair exactly $s$ times slower; the fastest keeps its speed, and pair $k$ is
#   slowed by $s^{2k/(d-2)}$, a little more at each pair.
# - `"yarn"`, YaRN (Peng, Quesnelle, Fan and Shippole, 2023): "NTK-by-parts" speeds, and a
#   temperature (below). Pair $k$ turns $r_k = L\theta_k / 2\pi$ times in the original
#   context. Pairs with $r_k > \beta$ keep their speed, pairs with $r_k < \alpha$ are slowed
#   by $s$, and the pairs between are blended; the paper recommends $\alpha = 1$ and
#   $\beta = 32$ for Llama models, `beta_slow` and `beta_fast` here, as in Hugging Face's
#   code. The paper writes the blend as linear in $r_k$; the authors' code
#   (`find_correction_range` and `linear_ramp_mask` in `jquesnelle/yarn`), Hugging Face's
#   and this package make it linear in the pair index $k$, from the pair that turns 32 times
#   to the pair that turns once, both rounded outwards.
# - `"llama3"`, Llama 3.1's, above: the YaRN paper's by-parts formula, linear in the turns,
#   with bounds of 1 and 4 turns (`low_freq_factor`, `high_freq_factor`) instead of 1 and
#   32, and no temperature. A `freq_config` without `rope_type` is this one, as in the
#   book's bonus code.
#
# The cell reads each pair's speed back from `compute_rope_params`, for the Llama 3 head of
# Figure 1 and Llama 3.1's $s = 8$ and $L = 8192$, and prints how many times slower it is
# than before: for the fastest pair, a middle one and the slowest, and then how many of
# the 64 pairs keep their speed, are slowed by 8, or lie between.

# %%
common = {"factor": 8.0, "original_context_length": 8192}
methods = {
    "linear": {"rope_type": "linear", **common},
    "ntk": {"rope_type": "ntk", **common},
    "yarn": {"rope_type": "yarn", **common},
    "llama3": {"rope_type": "llama3", **common, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
}


def speeds_of(freq_config=None):
    cos, sin = compute_rope_params(128, 500_000, 2, freq_config)
    return torch.atan2(sin[1, :64], cos[1, :64])  # theta_k; atan2 ignores a factor on both


original = speeds_of()
slowed = {name: original / speeds_of(config) for name, config in methods.items()}  # (64,)
print(f"{'':<8}{'pair 0':>8}{'pair 32':>9}{'pair 63':>9}{'kept':>6}{'by 8':>6}{'between':>9}")
for name, ratio in slowed.items():
    kept = torch.isclose(ratio, torch.tensor(1.0)).sum().item()
    by_8 = torch.isclose(ratio, torch.tensor(8.0)).sum().item()
    columns = f"{ratio[0]:>8.2f}{ratio[32]:>9.2f}{ratio[63]:>9.2f}"
    print(f"{name:<8}{columns}{kept:>6}{by_8:>6}{64 - kept - by_8:>9}")
# Out:
#           pair 0  pair 32  pair 63  kept  by 8  between
# linear      8.00     8.00     8.00     0    64        0
# ntk         1.00     2.88     8.00     1     1       62
# yarn        1.00     3.58     8.00    19    29       16
# llama3      1.00     2.69     8.00    29    29        6

# %%
wavelength = 2 * torch.pi / original  # positions per full turn, before scaling
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
left.plot(original, color="0.3", linestyle="--", label="no scaling")
for name, ratio in slowed.items():
    left.plot(original / ratio, label=name)
    right.plot(wavelength, ratio, marker=".", markersize=4, label=name)
left.set(yscale="log", xlabel="pair $k$", ylabel=r"$\theta_k$, radians per position")
left.legend(loc="lower left", framealpha=1)
for edge in (8192 / 32, 8192 / 4, 8192):  # 32 turns (YaRN), 4 turns (Llama 3.1), one turn
    right.axvline(edge, color="0.5", linestyle="--", linewidth=1)
right.set(xscale="log", xlabel="wavelength before scaling, positions per turn")
right.set(ylabel="times slower than before")  # the colours of the legend on the left
show_figure(
    fig,
    caption="Figure 2. The four rescalings of a Llama 3 head for 8 times its 8,192 positions.",
    alt=(
        "Left: the 64 speeds on a log scale against the pair index, unscaled (dashed) and "
        "for the four methods. The linear line runs parallel to the unscaled one, eight "
        "times lower; the ntk line starts on it at pair 0 and drifts down to eight times "
        "lower at pair 63; the yarn and llama3 lines follow it for the first pairs and end "
        "eight times lower. Right: how many times slower each pair is, against its "
        "wavelength before scaling on a log scale, with dashed lines at 256, 2,048 and "
        "8,192 positions. Linear is 8 everywhere; ntk climbs steadily from 1 to 8; yarn "
        "climbs from 1 to 8 between 256 and 8,192; llama3 between 2,048 and 8,192."
    ),
)
# Out:
# AttentionFigure('Figure 2. The four rescalings of a Llama 3 head for 8 times its 8,192 positions.')

# %% [markdown]
# Position Interpolation slows all 64 pairs by 8, the fastest included. NTK-aware scaling
# keeps pair 0 alone and slows pair 63 by exactly 8, each pair between a little more than
# the one before (pair 32 by 2.88). YaRN and Llama 3.1 keep the fast pairs and slow the 29
# pairs that turn less than once in 8,192 positions by 8; they differ in how many pairs
# they keep and blend, because YaRN blends from 32 turns and Llama 3.1 from 4.
#
# YaRN also scales the scores. The paper divides the logits by a temperature $t$,
# $\operatorname{softmax}(q^\top k / (t\sqrt{d}))$, recommends $\sqrt{1/t} = 0.1 \ln s + 1$
# for Llama models, and applies it by multiplying cos and sin by $\sqrt{1/t}$: the query
# and the key each carry it, so their dot product carries $1/t$. The authors' code
# (`get_mscale`) and Hugging Face's do the same, and so does `compute_rope_params` for
# `"yarn"`, so `apply_rope` needs no change; the other three types leave cos and sin as
# they are. With $s = 8$, a score with YaRN's cos and sin against the same angles without
# the factor:

# %%
torch.manual_seed(0)
q, k = torch.randn(2, 1, 1, 1, 128, dtype=torch.float64)  # each (b, heads, 1 token, d)
cos_y, sin_y = compute_rope_params(128, 500_000, 20, methods["yarn"], dtype=torch.float64)
sqrt_inv_t = 0.1 * math.log(8.0) + 1  # sqrt(1/t), in the paper's notation
plain = (cos_y / sqrt_inv_t, sin_y / sqrt_inv_t)  # the same angles, without the factor
with_t = (apply_rope(q, cos_y, sin_y, offset=19) * apply_rope(k, cos_y, sin_y, offset=3)).sum()
without_t = (apply_rope(q, *plain, offset=19) * apply_rope(k, *plain, offset=3)).sum()
print(f"sqrt(1/t) = {sqrt_inv_t:.4f}, 1/t = {sqrt_inv_t**2:.4f}, t = {1 / sqrt_inv_t**2:.4f}")
print(f"score with YaRN's cos and sin / without: {(with_t / without_t).item():.4f}")
# Out:
# sqrt(1/t) = 1.2079, 1/t = 1.4591, t = 0.6853
# score with YaRN's cos and sin / without: 1.4591

# %% [markdown]
# Every score is multiplied by $1/t$, and the softmax is sharper than it would be with the
# same angles alone.
