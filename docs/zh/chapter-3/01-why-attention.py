# %% [markdown] english="fac5074196f2"
# # 为什么需要注意力
#
# 书中 3.1 节和 3.2 节：长序列建模的问题，以及注意力（attention）如何让模型回头查看输入的每一个部分。
#
# ## 3.1 长序列建模的问题
#
# 逐词翻译一个句子是行不通的：不同语言的词序不同，而一个词的正确译法往往取决于离它很远的词。翻译模型必须先读完整个句子，然后才能开始输出。
#
# 在 Transformer 出现之前，常用的设计是**编码器-解码器循环神经网络**（encoder-decoder recurrent neural network，RNN）。编码器每次读入一个词元（token），并维护一个*隐藏状态*（hidden state），也就是每读入一个词元就更新一次的向量。输入结束时，最后的隐藏状态被交给解码器，解码器再以它为起点，逐个词元地生成输出。
#
# 薄弱环节正是这次交接：无论输入有多长，解码器收到的都只是一个固定大小的向量。下面用 PyTorch 中的一个小型 RNN，在我们由六个词元组成的句子上看看这一点。

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
# 编码器计算了六个隐藏状态，每读入一个词元得到一个，但经典的解码器只能看到最后一个：仅仅四个数字，却要概括整个句子。即使句子有六十个词元，也仍然只有四个数字。关于靠前词元的信息必须熬过之后的每一次更新，距离一长，它就会逐渐淡化。

# %% [markdown]
# ## 3.2 用注意力机制捕捉数据依赖关系
#
# 2014 年，Bahdanau、Cho 和 Bengio 改变了这种交接方式：在每一个输出步，解码器都可以查看编码器的**全部**隐藏状态，并决定此刻每个状态有多重要。这些表示“有多重要”的数就是**注意力权重**（attention weights）：它们非负，每个输入位置对应一个，总和为 1。随后，解码器基于这些状态的加权平均进行计算，也就是为这一步专门生成的**上下文向量**（context vector）。
#
# 下面用几行代码演示这个思想，用一个虚构的解码器状态充当*查询*（query）。查询与每个编码器状态之间的相似度用点积来衡量，再由 softmax 把这六个相似度转换为权重。

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
# 三年后，*Attention Is All You Need*（Vaswani 等，2017）彻底抛弃了循环结构。在 Transformer 中，序列中的每个词元关注的是**同一个**序列中的词元。这就是**自注意力**（self-attention），也是本章余下部分要构建的内容：
#
# - [简化的自注意力](02-simple-self-attention.py)：完全不含可训练权重的分数、权重和上下文向量。
# - [带可训练权重的自注意力](03-trainable-self-attention.py)：GPT 中使用的缩放点积注意力。
# - [因果注意力](04-causal-attention.py)：一个词元只能查看它之前的词元，正是这一点让模型能够逐个词元地生成文本。
# - [多头注意力](05-multi-head-attention.py)：多个注意力机制并排工作。
