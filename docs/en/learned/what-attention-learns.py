# %% [markdown]
# # What attention learns
#
# Beyond the book. Every attention weight in chapter 3 comes from a random seed: the classes
# compute the right thing, but nothing they compute means anything yet. This page trains two
# layers of chapter 3's `MultiHeadAttention` on a task that only attention can solve, on the
# CPU that built this site, and then reads what each head has learned. What it finds is a
# central result of the study of how transformers work, small enough to reproduce on any
# CPU: the *induction head* (Olsson et al., 2022, "In-context learning and induction
# heads"), which lets a model continue a pattern that it has seen earlier in its context.

# %%
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

from attention_mechanisms import MultiHeadAttention
from attention_mechanisms.checks import check_size
from attention_mechanisms.induction import (
    HALF_LENGTHS,
    SYMBOLS,
    TRAINING_THREADS,
    VOCAB_SIZE,
    AttentionOnlyTransformer,
    check_range,
    check_token_ids,
    repeated_tokens,
    spell,
    torch_threads,
    train_induction,
)
from attention_mechanisms.interpret import (
    attention_patterns,
    copy_accuracy,
    head_scores,
    zero_heads,
)
from attention_mechanisms.plotting import show_attention, show_figure

# %% [markdown]
# ## The task: continue a copy
#
# Each sequence is a start token, a run of random tokens, and the same run again.
# [`repeated_tokens`][attention_mechanisms.induction.repeated_tokens] draws them from 64
# tokens; `spell` writes each token as one character, and the start token as `^`:

# %%
generator = torch.Generator().manual_seed(1)
ids = repeated_tokens(3, 6, VOCAB_SIZE, generator=generator)
print(ids.shape)
print(ids[0])
for row in ids:
    print(spell(row))
# Out:
# torch.Size([3, 13])
# tensor([64, 37, 43, 12,  8, 63,  9, 37, 43, 12,  8, 63,  9])
# ^LRmi!jLRmi!j
# ^lfpaqblfpaqb
# ^mhT8gzmhT8gz

# %% [markdown]
# A model reads the sequence from left to right and, at every token, predicts the next one.
# In the first copy it cannot do better than chance, one right guess in 64: the tokens are
# random. In the second copy every token can be predicted, but only by looking back: find
# where the current token stood in the first copy, and predict the token that came after it
# there. Nothing in a single token says what comes next; the answer is in the context.
#
# The copies vary in length, from 4 to 12 tokens, so that the position of a token does not
# tell where its earlier copy is. With one fixed length, a single layer of attention learns
# to look a fixed number of tokens back, and no induction head forms.
#
# Tokens are drawn with replacement, so a token can occur twice in one copy. In the second
# copy, a model that looks back for that token alone then finds two earlier copies of it,
# followed by two different tokens, and can only guess between them. The more tokens a copy
# holds and the fewer there are to draw from, the more often that happens:


# %%
def ambiguous(ids: torch.Tensor) -> float:
    """The share of second-copy predictions whose token occurs twice in its copy, with
    different tokens after it."""
    half = (ids.shape[1] - 1) // 2
    copy = ids[:, 1 : half + 1]  # (b, L)
    same = copy[:, :-1, None] == copy[:, None, :-1]  # (b, L-1, L-1): token i is token j
    differ = copy[:, 1:, None] != copy[:, None, 1:]  # what follows them differs
    return (same & differ).any(dim=-1).float().mean().item()


for vocab_size in (16, VOCAB_SIZE, 256):
    shares = [
        ambiguous(repeated_tokens(2000, half, vocab_size, generator=generator)) for half in (4, 12)
    ]
    print(
        f"{vocab_size:>3} tokens: {shares[0]:.1%} of predictions ambiguous at 4 tokens a copy, "
        f"{shares[1]:.1%} at 12"
    )
# Out:
#  16 tokens: 11.8% of predictions ambiguous at 4 tokens a copy, 45.5% at 12
#  64 tokens: 2.9% of predictions ambiguous at 4 tokens a copy, 14.7% at 12
# 256 tokens: 1.0% of predictions ambiguous at 4 tokens a copy, 3.6% at 12

# %% [markdown]
# With 16 tokens, almost half of the predictions at 12 tokens a copy would be ambiguous.
# With 64 tokens, few are at 4 tokens a copy, and about one in seven at 12. More tokens
# would make the task cleaner still, but the model's embeddings and output head grow with
# them, and the [Playground](../chapter-3/playground.md) downloads this model's weights. 64
# tokens and copies of 4 to 12 keep the model small, and leave the repeated copy
# predictable enough for the checks below, which ask at least 97 right predictions in 100.
#
# ## The model: chapter 3's attention, twice
#
# [`AttentionOnlyTransformer`][attention_mechanisms.induction.AttentionOnlyTransformer] is a
# GPT with everything but attention taken out. Token and position embeddings make a
# *residual stream* of `d_model` numbers per token; each block is the `MultiHeadAttention`
# of [3.6](../chapter-3/05-multi-head-attention.py), whose output is *added* to the stream;
# the output head turns the stream into one score per token of the vocabulary. There is no
# MLP and no layer norm: the task needs neither, and without them every head writes straight
# into the stream that the next layer and the output head read.

# %% include="attention_mechanisms.induction.AttentionOnlyTransformer"

# %% [markdown]
# The chapter's model has 2 layers of 2 heads, each head 16 numbers wide:

# %%
torch.manual_seed(123)
untrained = AttentionOnlyTransformer(
    vocab_size=VOCAB_SIZE, context_length=25, d_model=32, num_heads=2, num_layers=2
)
print(sum(p.numel() for p in untrained.parameters()), "parameters")
print(untrained(ids).shape)  # (batch, tokens, vocab_size): a score for every next token
# Out:
# 13184 parameters
# torch.Size([3, 13, 64])

# %% [markdown]
# ## Training
#
# [`train_induction`][attention_mechanisms.induction.train_induction] trains it: at every
# step, one copy length drawn from 4 to 12, a batch of 64 sequences of that length, and an
# optimizer step on the cross-entropy of every next token, as a GPT is trained on text. Its
# defaults are this chapter's settings:

# %% include="attention_mechanisms.induction.train_induction"

# %% [markdown]
# The optimizer is AdamW, as in the book's chapter 5, with one difference: its weight decay
# applies only to `W_value` and `out_proj`, the weights with which a head *writes* into the
# stream, not to the queries and keys that decide where it *looks*. Writing then has a
# price, so a head that the task does not need ends up writing almost nothing, while the
# heads it needs can still attend sharply. While we built this chapter, models trained
# with plain Adam sometimes came to lean on a second head of layer 0, which looks two
# tokens back and settles a few of the ambiguous predictions; without that head those
# models lost far more than the few predictions it settled. With the decay on writing, the
# work stays with the two heads this page is about.

# %% nondeterministic="the time depends on the machine that builds the site" export="model losses"
start = time.perf_counter()
model, losses = train_induction()
print(f"{len(losses)} steps in {time.perf_counter() - start:.0f} s")

# %% [markdown]
# The loss starts near $\ln 64 \approx 4.16$, the loss of a uniform guess among 64 tokens.
# It can never reach 0: about half of all predictions are in the first copy, where every
# guess is one in 64. In between, it does not fall smoothly: it sits on a plateau, then
# drops within a few hundred steps. That drop is where the induction head forms, the *phase
# change* that Olsson et al. observed in every model they trained with more than one layer,
# small and large.

# %%
smooth = torch.tensor(losses).unfold(0, 100, 1).mean(dim=1)  # mean of 100 steps
middle = (smooth[0] + smooth[-1]) / 2
phase = int((smooth < middle).nonzero()[0]) + 100  # the step where it crosses halfway
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
ax.plot(range(1, len(losses) + 1), losses, color="0.8", linewidth=0.5, label="loss")
ax.plot(range(100, len(losses) + 1), smooth, color="C0", label="mean of 100 steps")
ax.axvline(phase, color="C1", linestyle="--", label="the drop")
ax.set_xlabel("training step")
ax.set_ylabel("cross-entropy")
ax.legend()
show_figure(
    fig,
    caption="Figure 1. The training loss: a plateau, a sudden drop, then a slow decline.",
    alt=(
        "A line chart of the training loss against the step. It starts near 4.2, soon falls "
        "to a plateau, stays there, then drops steeply within a few hundred steps, marked by "
        "a dashed line, and declines slowly after that."
    ),
)
# Out:
# AttentionFigure('Figure 1. The training loss: a plateau, a sudden drop, then a slow decline.')

# %% [markdown]
# ## Accuracy: chance, then copying
#
# On sequences that the model has never seen, 500 of each length from 4 to 12,
# [`copy_accuracy`][attention_mechanisms.interpret.copy_accuracy] counts how often its most
# likely next token is right, in each copy:

# %%
generator = torch.Generator().manual_seed(2024)
tests = [repeated_tokens(500, half, VOCAB_SIZE, generator=generator) for half in range(4, 13)]
accuracy = torch.tensor([copy_accuracy(model, ids) for ids in tests])  # (lengths, 2)
first, repeated = accuracy.mean(dim=0).tolist()

# %% nondeterministic="training ends in other last digits on another CPU; the next cell checks what holds"
print(f"first copy:    {first:.3f}   (chance: {1 / VOCAB_SIZE:.3f})")
print(f"repeated copy: {repeated:.3f}")

# %% [markdown]
# The numbers above come from this build's training, and another CPU trains to other last
# digits. What holds on every machine, and fails the build when it does not: the repeated
# copy is continued at least 97 times in 100, and the first copy is guessed no better than
# twice chance.

# %%
print(repeated >= 0.97, first <= 2 / VOCAB_SIZE)
# Out:
# True True

# %% [markdown]
# ## What each head looks at
#
# [`attention_patterns`][attention_mechanisms.interpret.attention_patterns] reads every
# head's weights. In `MultiHeadAttention.forward` the weights pass through `self.dropout`
# (which does nothing here: its probability is 0), and a hook on that module sees them
# without a line of the class changing. Here is one sequence with copies of 10 tokens:

# %%
example = repeated_tokens(1, 10, VOCAB_SIZE, generator=torch.Generator().manual_seed(7))
print(spell(example[0]))
patterns = attention_patterns(model, example)  # one (1, heads, 21, 21) tensor per layer
labels = list(spell(example[0]))
# Out:
# ^Vez2dtxNC5Vez2dtxNC5

# %%
show_attention(
    patterns[0][0],
    labels,
    decimals=None,
    head_titles=["layer 0, head 0", "layer 0, head 1"],
    caption="Figure 2. The attention weights of layer 0's two heads on one sequence.",
    alt=(
        "Two heatmaps of 21 by 21 attention weights over a start token and two copies of "
        "ten tokens. In one of them, almost all the weight of every row sits on the cell "
        "just left of the diagonal: each token looks at the token before it."
    ),
)
# Out:
# AttentionFigure("Figure 2. The attention weights of layer 0's two heads on one sequence.")

# %%
show_attention(
    patterns[1][0],
    labels,
    decimals=None,
    head_titles=["layer 1, head 0", "layer 1, head 1"],
    caption="Figure 3. The attention weights of layer 1's two heads on the same sequence.",
    alt=(
        "Two heatmaps of 21 by 21 attention weights. In the rows of the second copy, the "
        "weight of at least one head sits on a stripe parallel to the diagonal, nine cells to "
        "its left: each token of the second copy looks at the token after its earlier copy."
    ),
)
# Out:
# AttentionFigure("Figure 3. The attention weights of layer 1's two heads on the same sequence.")

# %% [markdown]
# One head of layer 0 is a *previous-token head*: each token looks at the token just before
# it. In layer 1, the rows of the second copy look along a stripe nine tokens left of the
# diagonal. A token of the second copy stands 10 positions after its earlier copy, so the
# stripe falls on the token *after* the earlier copy: the very token that comes next. That
# is an *induction head*.
#
# [`head_scores`][attention_mechanisms.interpret.head_scores] puts a number on both patterns
# for every head, averaged over all the test sequences: the *previous-token score*, the
# mean weight a token of the first copy puts on the token before it, and the
# *prefix-matching score*, the mean weight a token of the second copy puts on the token after
# its earlier copy (on the tokens after each earlier copy, where its token occurs more than
# once). The
# last token of a sequence predicts nothing, so neither training nor the scores use its row.

# %%
scores = [head_scores(model, ids) for ids in tests]
previous = torch.stack([p for p, _ in scores]).mean(dim=0)  # (layers, heads)
prefix = torch.stack([m for _, m in scores]).mean(dim=0)

# %% nondeterministic="training ends in other last digits on another CPU; the next cell checks what holds"
print("layer  head  previous-token  prefix-matching")
for layer in range(2):
    for head in range(2):
        print(
            f"{layer:>5}  {head:>4}  {previous[layer, head]:>14.2f}  {prefix[layer, head]:>15.2f}"
        )

# %% [markdown]
# On every machine: a head of layer 0 has a previous-token score of at least 0.9, and a head
# of layer 1 a prefix-matching score of at least 0.9.

# %%
print(bool(previous[0].max() >= 0.9), bool(prefix[1:].max() >= 0.9))
# Out:
# True True

# %% [markdown]
# Which head of a layer does the work depends on the random start, so it can differ from
# one machine to another. With two heads per layer, two heads can also share the work: both
# heads of layer 1 may be induction heads, each covering part of the sequence.
#
# ## Ablation: take a head out
#
# A pattern in the weights suggests what a head does; taking the head out shows whether the
# model needs it. [`zero_heads`][attention_mechanisms.interpret.zero_heads] sets a head's
# context vectors to zero before `out_proj`, so that it adds nothing to the stream. We take
# out every *induction head* (a head after layer 0 with a prefix-matching score of at least
# 0.5), then every *previous-token head* (a head of layer 0 with a previous-token score of at
# least 0.5), then each other head alone:

# %%
induction_heads = [(1, h) for h in range(2) if prefix[1, h] >= 0.5]
previous_heads = [(0, h) for h in range(2) if previous[0, h] >= 0.5]
other_heads = [
    (layer, h)
    for layer in range(2)
    for h in range(2)
    if (layer, h) not in induction_heads + previous_heads
]


def repeated_accuracy(heads: list[tuple[int, int]]) -> float:
    """Repeated-copy accuracy on the test sequences, with ``heads`` zeroed."""
    with zero_heads(model, heads):
        return sum(copy_accuracy(model, ids)[1] for ids in tests) / len(tests)


without = {
    "induction heads": repeated_accuracy(induction_heads),
    "previous-token heads": repeated_accuracy(previous_heads),
    **{f"head {h} of layer {layer}": repeated_accuracy([(layer, h)]) for layer, h in other_heads},
}

# %% nondeterministic="training ends in other last digits on another CPU; the next cell checks what holds"
print(f"all heads: {repeated:.3f}")
for name, value in without.items():
    print(f"without the {name}: {value:.3f}")

# %% [markdown]
# Without either kind of head, the model no longer copies: on every machine, its
# repeated-copy accuracy falls below 0.5. Without any other head alone, it drops by less
# than 0.05:

# %%
print(without["induction heads"] < 0.5, without["previous-token heads"] < 0.5)
print(all(repeated - without[f"head {h} of layer {layer}"] < 0.05 for layer, h in other_heads))
# Out:
# True True
# True

# %% [markdown]
# ## Why it takes two layers
#
# A head of layer 0 reads only the embeddings: a token and its position. To find "the token
# after an earlier copy of mine", a head needs keys that say which token came *before* each
# position, and no embedding holds that. The previous-token head writes it into the stream,
# and the induction head's keys read it there: Elhage et al. (2021, "A mathematical
# framework for transformer circuits") call this *K-composition*.
#
# The model's own numbers show it. The stream that layer 1 reads is a sum: the token
# embedding, the position embedding, what each head of layer 0 wrote, and the bias of
# layer 0's `out_proj`. Keys are a linear function of the stream (`W_key` has no bias), so
# the induction head's scores split into one part per term. For each term, we compare the
# mean score on the right key, the token after the earlier copy, with the mean score on every
# other key the second copy can see:

# %%
layer0, layer1 = model.blocks
num_tokens, d_head = example.shape[1], layer0.head_dim
stream = model.tok_emb(example) + model.pos_emb(torch.arange(num_tokens))  # (1, T, d_model)
values = layer0.W_value(stream).view(1, num_tokens, 2, d_head).transpose(1, 2)  # (1, 2, T, d_head)
written = patterns[0] @ values  # (1, 2, T, d_head): what each head of layer 0 found
terms = {
    "token embedding": model.tok_emb(example),
    "position embedding": model.pos_emb(torch.arange(num_tokens)).unsqueeze(0),
    **{
        f"layer-0 head {h}": written[:, h]
        @ layer0.out_proj.weight[:, h * d_head : (h + 1) * d_head].T
        for h in range(2)
    },
    "out_proj bias": layer0.out_proj.bias.expand(1, num_tokens, -1),
}
with torch.no_grad():
    layer1_input = stream + layer0(stream)
    print(torch.allclose(sum(terms.values()), layer1_input, atol=1e-5))  # the terms add up
# Out:
# True

# %%
head = int(prefix[1].argmax())  # the induction head with the highest score
half = 10
queries = layer1.W_query(layer1_input).view(1, num_tokens, 2, d_head)[0, :, head]  # (T, d_head)
second = torch.arange(half + 1, num_tokens - 1)  # the second copy, but its last token
right = second - half + 1  # the token after each one's earlier copy
seen = torch.ones(num_tokens, num_tokens).tril().bool()[second]  # keys each query can see
seen[torch.arange(half - 1), right] = False  # every seen key but the right one
gaps = {}
with torch.no_grad():
    for name, term in terms.items():
        keys = layer1.W_key(term).view(1, num_tokens, 2, d_head)[0, :, head]  # (T, d_head)
        part = (queries[second] @ keys.T) / d_head**0.5  # (9, T): this term's share of the scores
        gaps[name] = (part[torch.arange(half - 1), right].mean() - part[seen].mean()).item()

# %% nondeterministic="training ends in other last digits on another CPU; the next cell checks what holds"
for name, gap in gaps.items():
    print(f"{name:>20}: {gap:6.2f}")

# %% [markdown]
# The right key stands out in the part that the previous-token head wrote, far more than in
# any other part: the induction head finds its key by what the previous-token head put
# there. On every machine:

# %%
writer = f"layer-0 head {int(previous[0].argmax())}"
print(max(gaps, key=gaps.get) == writer)
# Out:
# True

# %% [markdown]
# A one-layer model has no such term: its keys hold only tokens and positions. The first
# exercise trains one.
#
# ## Exercises
#
# ### Exercise 1: one layer
#
# Train a model with one layer (`num_layers=1`) for 2,000 steps and measure its
# repeated-copy accuracy on `tests`, length by length. Where does it copy, and why there?

# %% tags=["solution"] nondeterministic="training ends in other last digits on another CPU; the next cell checks what holds"
one_layer, _ = train_induction(num_layers=1, steps=2000)
by_length = [copy_accuracy(one_layer, ids)[1] for ids in tests]
one_layer_accuracy = sum(by_length) / len(by_length)
print(" ".join(f"{half}: {value:.2f}" for half, value in zip(range(4, 13), by_length, strict=True)))
print(f"mean: {one_layer_accuracy:.2f}")

# %% tags=["solution"]
print(one_layer_accuracy < 0.75, by_length[0] > by_length[-1])
# Out:
# True True

# %% [markdown] tags=["solution"]
# One layer copies the shortest copies best, and on average far worse than two layers. It
# copies by position. A token at position 5 either starts the second copy of a sequence with
# copies of 4, and then the token to copy stands 3 positions back, or it lies in a first
# copy, where no guess can be right: looking 3 positions back costs nothing. The further a
# position, the more copy lengths it fits, and the worse that guess. To continue any copy, a
# model needs the two layers of an induction head.

# %% [markdown]
# ### Exercise 2: a sequence of your own
#
# Write a copy of your own from the characters of `spell` (letters, digits, `?` and `!`),
# repeat it, and print the model's most likely next token at every position of the second
# copy. Then put one character twice into your copy: what does the model predict after that
# character in the second copy, and where do the induction head's weights go?

# %% tags=["solution"]
text = "Kq7Zb"
ids = torch.tensor([[VOCAB_SIZE] + [SYMBOLS.index(c) for c in text * 2]])
with torch.no_grad():
    predicted = model(ids).argmax(dim=-1)[0]
print(spell(predicted[len(text) + 1 :]) == text[1:] + text[0])
# Out:
# True

# %% [markdown]
# The model continues the copy, and after its last token it predicts `K` again, as if a
# third copy followed. With a character twice, as in `"Kq7Zbq"`, each `q` of the second
# copy has earlier copies followed by different tokens, `7` and `K`, and the model must
# choose between them.
#
# ## Pitfalls
#
# **One length for every sequence.** Trained on copies of one length only, the model does
# not need an induction head: a token's earlier copy is always the same number of positions
# back, and one head of layer 0 can look there by position alone. Vary the length, as
# `train_induction` does.
#
# **The token after the copy, not the copy.** The prefix-matching score measures the weight
# on the token *after* the earlier copy of the current token. Measured on the earlier copy
# itself, it finds heads that look at repeated tokens, which is another pattern.
