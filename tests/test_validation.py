"""Bad input gets a clear error naming the argument, what was expected and what came."""

from __future__ import annotations

import re

import pytest
import torch

from attention_mechanisms import (
    CausalAttention,
    FusedMultiHeadAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
)
from attention_mechanisms.gated import GatedDeltaNet, GatedMultiHeadAttention
from attention_mechanisms.grouped_query import GroupedQueryAttention
from attention_mechanisms.latent import MultiHeadLatentAttention
from attention_mechanisms.sliding_window import MultiHeadAttentionWithSWA

# Each factory builds a valid module from keyword overrides: d_in=3, context_length=6.
FACTORIES = {
    "SelfAttention_v1": lambda d_in=3, d_out=2: SelfAttention_v1(d_in, d_out),
    "SelfAttention_v2": lambda d_in=3, d_out=2: SelfAttention_v2(d_in, d_out),
    "CausalAttention": lambda d_in=3, d_out=2, context_length=6, dropout=0.0: CausalAttention(
        d_in, d_out, context_length, dropout
    ),
    "MultiHeadAttentionWrapper": (
        lambda d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2: (
            MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads)
        )
    ),
    "MultiHeadAttention": (
        lambda d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2: MultiHeadAttention(
            d_in, d_out, context_length, dropout, num_heads
        )
    ),
    "FusedMultiHeadAttention": (
        lambda d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2: FusedMultiHeadAttention(
            d_in, d_out, context_length, dropout, num_heads
        )
    ),
}
WITH_CONTEXT = [
    "CausalAttention",
    "MultiHeadAttentionWrapper",
    "MultiHeadAttention",
    "FusedMultiHeadAttention",
]


def size_arguments(names):
    for name in names:
        for arg in ("d_in", "d_out", "context_length", "num_heads"):
            code = FACTORIES[name].__code__
            if arg in code.co_varnames[: code.co_argcount]:
                yield name, arg


@pytest.mark.parametrize(("name", "arg"), list(size_arguments(FACTORIES)))
@pytest.mark.parametrize("bad", [0, -2])
def test_non_positive_sizes(name, arg, bad):
    with pytest.raises(ValueError, match=rf"^{arg} must be a positive int; got {bad}$"):
        FACTORIES[name](**{arg: bad})


@pytest.mark.parametrize(("name", "arg"), list(size_arguments(FACTORIES)))
@pytest.mark.parametrize(
    ("bad", "shown"), [(3.0, r"3\.0 \(float\)"), ("3", r"'3' \(str\)"), (True, r"True \(bool\)")]
)
def test_non_integer_sizes(name, arg, bad, shown):
    with pytest.raises(TypeError, match=rf"^{arg} must be a positive int; got {shown}$"):
        FACTORIES[name](**{arg: bad})


def test_d_out_not_divisible_by_num_heads():
    message = "d_out must be divisible by num_heads; got d_out=10, num_heads=4 (remainder 2)"
    for cls in (MultiHeadAttention, FusedMultiHeadAttention):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            cls(3, 10, 6, 0.0, num_heads=4)


@pytest.mark.parametrize("name", WITH_CONTEXT)
@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5])
def test_dropout_outside_unit_interval(name, bad):
    with pytest.raises(ValueError, match=rf"^dropout must be a float in \[0, 1\); got {bad}$"):
        FACTORIES[name](dropout=bad)


@pytest.mark.parametrize("name", WITH_CONTEXT)
def test_dropout_not_a_number(name):
    with pytest.raises(
        TypeError, match=r"^dropout must be a float in \[0, 1\); got '0.1' \(str\)$"
    ):
        FACTORIES[name](dropout="0.1")


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("shape", [(3,), (1, 2, 6, 3)])
def test_input_not_2d_or_3d(name, shape):
    module = FACTORIES[name]()
    message = (
        "x must be 2-D (num_tokens, d_in) or 3-D (batch, num_tokens, d_in); "
        f"got {len(shape)}-D with shape {shape}"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        module(torch.ones(shape))


@pytest.mark.parametrize("name", FACTORIES)
def test_last_dimension_not_d_in(name):
    module = FACTORIES[name]()
    message = "x must have last dimension d_in=3; got shape (2, 6, 4)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        module(torch.ones(2, 6, 4))


@pytest.mark.parametrize("name", FACTORIES)
def test_no_tokens(name):
    with pytest.raises(
        ValueError, match=r"^x must hold at least one token; got shape \(2, 0, 3\)$"
    ):
        FACTORIES[name]()(torch.ones(2, 0, 3))


@pytest.mark.parametrize("name", WITH_CONTEXT)
def test_more_tokens_than_context_length(name):
    module = FACTORIES[name]()
    with pytest.raises(ValueError, match=r"^x has 7 tokens, more than context_length=6; "):
        module(torch.ones(2, 7, 3))


@pytest.mark.parametrize("name", FACTORIES)
def test_non_floating_input(name):
    module = FACTORIES[name]()
    message = "x must have a floating-point dtype (e.g. torch.float32); got torch.int64"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        module(torch.ones(6, 3, dtype=torch.long))


@pytest.mark.parametrize("name", FACTORIES)
def test_input_not_a_tensor(name):
    with pytest.raises(TypeError, match=r"^x must be a torch.Tensor; got list$"):
        FACTORIES[name]()([[1.0, 2.0, 3.0]])


def test_checks_survive_python_optimize_mode():
    # assert statements vanish under `python -O`; these checks must not.
    import subprocess
    import sys

    code = (
        "from attention_mechanisms import MultiHeadAttention\n"
        "try:\n    MultiHeadAttention(3, 10, 6, 0.0, num_heads=4)\n"
        "except ValueError as e:\n    print('raised:', e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith("raised: d_out must be divisible by num_heads")


# Every class that takes a sequence x: chapter 3's and today's, with the sizes they need.
EVERY_CLASS = {
    **FACTORIES,
    "GroupedQueryAttention": lambda: GroupedQueryAttention(3, 4, 0.0, 2, num_kv_groups=1),
    "MultiHeadAttentionWithSWA": lambda: MultiHeadAttentionWithSWA(
        3, 4, 0.0, 2, sliding_window_size=3
    ),
    "MultiHeadLatentAttention": lambda: MultiHeadLatentAttention(3, 4, 0.0, 2, latent_dim=2),
    "GatedMultiHeadAttention": lambda: GatedMultiHeadAttention(3, 4, 6, 0.0, 2),
    "GatedDeltaNet": lambda: GatedDeltaNet(3, 4, 0.0, 2),
}


@pytest.mark.parametrize("name", EVERY_CLASS)
def test_an_input_of_another_dtype_than_the_weights_is_named(name):
    message = (
        "x must be torch.float32 like the module's parameters; got torch.float64: convert x "
        "with x.to(torch.float32), or the module with .to(torch.float64)"
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        EVERY_CLASS[name]()(torch.ones(2, 6, 3, dtype=torch.float64))


@pytest.mark.parametrize("name", EVERY_CLASS)
def test_an_input_on_another_device_than_the_weights_is_named(name):
    with pytest.raises(
        ValueError, match=r"^x must be on cpu like the module's parameters; got meta"
    ):
        EVERY_CLASS[name]()(torch.ones(2, 6, 3, device="meta"))
