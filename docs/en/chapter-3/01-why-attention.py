# %% [markdown]
# # Why attention
#
# Book sections 3.1 and 3.2: the problem with modelling long sequences, and how attention
# lets a model look back at every part of its input.
#
# ## 3.1 The problem with modelling long sequences
#
# Translating a sentence word by word does not work: languages order words differently, and
# the right translation of a word often depends on words far away from it. A translation
# model has to read the whole sentence before it writes anything.
#
# Before transformers, the usual design was an **encoder-decoder recurrent neural network
# (RNN)**. The encoder reads the input one token at a time and keeps a *hidden state*, a
# vector it updates after every token. When the input ends, that last hidden state is handed
# to the decoder, which writes the output one token at a time from it.
#
# The weak point is that hand-over: however long the input, the decoder receives one vector of
# fixed size. Let us see that with a small RNN from PyTorch on our six-token sentence.

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
# The encoder computed six hidden states, one after each token, but a classic decoder sees
# only the last one: four numbers that must summarise the whole sentence. With a sentence of
# sixty tokens it would still be four numbers. Information about early tokens has to survive
# every later update, and over long distances it fades.

# %% [markdown]
# ## 3.2 Capturing data dependencies with attention mechanisms
#
# In 2014 Bahdanau, Cho and Bengio changed the hand-over: at every output step the decoder
# may look at **all** the encoder's hidden states and decide how much each one matters right
# now. Those "how much" numbers are the **attention weights**: non-negative, one per input
# position, summing to 1. The decoder then works from the weighted average of the states, a
# **context vector** made for this step.
#
# Here is that idea in a few lines, with a made-up decoder state as the *query*. The
# similarity of the query to each encoder state is a dot product, and softmax turns the six
# similarities into weights.

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
# Three years later, *Attention Is All You Need* (Vaswani et al., 2017) dropped the
# recurrence altogether. In a transformer, every token of a sequence attends to the tokens of
# the **same** sequence. That is **self-attention**, and it is what the rest of this chapter
# builds:
#
# - [Simplified self-attention](02-simple-self-attention.py): scores, weights and context
#   vectors with no trainable weights at all.
# - [Self-attention with trainable weights](03-trainable-self-attention.py): the scaled
#   dot-product attention used in GPT.
# - [Causal attention](04-causal-attention.py): a token may only look at itself and earlier tokens,
#   which is what lets a model generate text one token at a time.
# - [Multi-head attention](05-multi-head-attention.py): several attention mechanisms side
#   by side.
