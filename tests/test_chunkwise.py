"""Chunkwise Gated DeltaNet: the token-by-token loop's outputs, state and gradients."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms import GatedDeltaNet
from attention_mechanisms.chunkwise import chunkwise_delta_rule


def pair(chunk_size: int, per_head: bool, dtype=torch.float32, bias=False, d=32, heads=4):
    """The loop and the chunkwise form with the same parameters, drawn from one seed."""
    modules = []
    for size in (None, chunk_size):
        torch.manual_seed(5)
        modules.append(
            GatedDeltaNet(d, d, 0.0, heads, qkv_bias=bias, chunk_size=size, beta_per_head=per_head)
        )
    return [m.to(dtype) for m in modules]


def outputs_and_gradients(module, x, weights):
    x = x.clone().requires_grad_()
    y = module(x)
    grads = torch.autograd.grad((y * weights).sum(), [x, *module.parameters()])
    return y, grads


@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize(
    ("tokens", "chunk_size"), [(1, 4), (7, 4), (64, 16), (130, 32), (1024, 64)]
)
def test_float32_outputs_and_gradients_equal_the_loop(per_head, tokens, chunk_size):
    loop, chunked = pair(chunk_size, per_head, bias=per_head)
    x, weights = torch.randn(2, tokens, 32), torch.randn(2, tokens, 32)
    y_loop, g_loop = outputs_and_gradients(loop, x, weights)
    y_chunk, g_chunk = outputs_and_gradients(chunked, x, weights)
    assert (y_chunk - y_loop).abs().max().item() <= 1e-5
    names = ["x"] + [name for name, _ in loop.named_parameters()]
    # Each gradient sums b * T contributions and grows with them: the bar is 1e-5 of the
    # layer's largest gradient. The float32 loop itself is further than that from float64.
    scale = max(a.abs().max().item() for a in g_loop)
    for name, a, b in zip(names, g_loop, g_chunk, strict=True):
        assert (b - a).abs().max().item() <= 1e-5 * scale, name


@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize(("tokens", "chunk_size"), [(100, 64), (300, 64)])
def test_the_decays_gradients_hold_to_their_own_scale(per_head, tokens, chunk_size):
    # The decay parameters' gradients are small beside the others. Were e^(g_t - g_i) taken
    # as the difference of two long float32 sums, they would be off by 6e-4 of themselves.
    loop, chunked = pair(chunk_size, per_head, bias=per_head)
    x, weights = torch.randn(2, tokens, 32), torch.randn(2, tokens, 32)
    names = [name for name, _ in loop.named_parameters()]
    _, (_, *g_loop) = outputs_and_gradients(loop, x, weights)
    _, (_, *g_chunk) = outputs_and_gradients(chunked, x, weights)
    for name, a, b in zip(names, g_loop, g_chunk, strict=True):
        if name in ("A_log", "dt_bias", "W_alpha.weight"):
            assert (b - a).abs().max().item() <= 1e-4 * a.abs().max().item(), name


@pytest.mark.parametrize("per_head", [False, True])
def test_float64_outputs_and_gradients_equal_the_loop_to_1e10(per_head):
    loop, chunked = pair(16, per_head, dtype=torch.float64, bias=True)
    x, weights = (
        torch.randn(3, 50, 32, dtype=torch.float64),
        torch.randn(3, 50, 32, dtype=torch.float64),
    )
    y_loop, g_loop = outputs_and_gradients(loop, x, weights)
    y_chunk, g_chunk = outputs_and_gradients(chunked, x, weights)
    assert (y_chunk - y_loop).abs().max().item() <= 1e-10
    for a, b in zip(g_loop, g_chunk, strict=True):
        assert (b - a).abs().max().item() <= 1e-10


@torch.no_grad()
def test_the_state_carries_over_between_cached_calls_of_either_form():
    loop, chunked = pair(8, per_head=False, dtype=torch.float64)
    x = torch.randn(2, 30, 32, dtype=torch.float64)
    full = loop(x)
    parts = [chunked(x[:, a:b], use_cache=True) for a, b in [(0, 13), (13, 14), (14, 30)]]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=1e-12)
    loop(x, use_cache=True)
    torch.testing.assert_close(chunked.cache_state, loop.cache_state, rtol=0, atol=1e-12)
    assert chunked.ptr_current_pos == 30


def test_a_strong_decay_does_not_overflow_within_a_chunk():
    # exp(g_t - g_i) for i > t would overflow; it must be masked before the exponential.
    torch.manual_seed(0)
    b, h, t, d = 1, 2, 64, 8
    q, k, v = (torch.nn.functional.normalize(torch.randn(b, h, t, d), dim=-1) for _ in range(3))
    beta = torch.rand(b, h, t, d)
    alpha_log = torch.full((b, h, t), -30.0)  # alpha = e^-30 per token: e^-1920 over a chunk
    state = torch.zeros(b, h, d, d)
    out, last = chunkwise_delta_rule(q, k, v, beta, alpha_log, state, chunk_size=64)
    assert torch.isfinite(out).all() and torch.isfinite(last).all()


def test_beta_per_head_has_one_update_gate_per_head():
    layer = GatedDeltaNet(16, 16, 0.0, num_heads=4, beta_per_head=True)
    assert layer.W_beta.weight.shape == (4, 16)
    assert GatedDeltaNet(16, 16, 0.0, num_heads=4).W_beta.weight.shape == (16, 16)


def test_the_loop_keeps_the_bonus_codes_parameters_bit_for_bit():
    torch.manual_seed(9)
    loop = GatedDeltaNet(8, 8, 0.0, 2)
    torch.manual_seed(9)
    chunked = GatedDeltaNet(8, 8, 0.0, 2, chunk_size=4)
    for (name, a), b in zip(loop.state_dict().items(), chunked.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"chunk_size": 0}, ValueError, r"^chunk_size must be a positive int; got 0"),
        ({"chunk_size": 2.5}, TypeError, r"^chunk_size must be "),
        ({"beta_per_head": 1}, TypeError, r"^beta_per_head must be "),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        GatedDeltaNet(8, 8, 0.0, 2, **kwargs)


@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize(
    ("sizes", "tokens", "chunk_size"),
    [
        ({"d_in": 5, "d_out": 8, "num_heads": 1}, 65, 64),  # one head, one token past a chunk
        ({"d_in": 12, "d_out": 6, "num_heads": 3}, 33, 7),  # d_in > d_out, a chunk of 7
    ],
)
def test_other_shapes_and_one_unbatched_sequence(per_head, sizes, tokens, chunk_size):
    layers = []
    for size in (None, chunk_size):
        torch.manual_seed(2)
        layers.append(GatedDeltaNet(dropout=0.0, chunk_size=size, beta_per_head=per_head, **sizes))
    loop, chunked = (layer.double() for layer in layers)
    x = torch.randn(tokens, sizes["d_in"], dtype=torch.float64, requires_grad=True)
    y_loop, y_chunk = loop(x), chunked(x)
    (g_loop,) = torch.autograd.grad(y_loop.sum(), x)
    (g_chunk,) = torch.autograd.grad(y_chunk.sum(), x)
    assert (y_chunk - y_loop).abs().max().item() <= 1e-10
    assert (g_chunk - g_loop).abs().max().item() <= 1e-10
