"""Gated attention and Gated DeltaNet: the bonus code's parameters, the delta rule, the state."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attention_mechanisms import GatedDeltaNet, GatedMultiHeadAttention, MultiHeadAttention


def test_gated_attention_draws_its_parameters_in_the_bonus_order():
    torch.manual_seed(3)
    attn = GatedMultiHeadAttention(5, 8, context_length=6, dropout=0.0, num_heads=2)
    torch.manual_seed(3)
    expected = [nn.Linear(5, 8, bias=False) for _ in range(4)] + [nn.Linear(8, 8)]
    names = ["W_query", "W_gate", "W_key", "W_value", "out_proj"]
    assert [name for name, _ in attn.named_parameters()] == [
        "W_query.weight", "W_gate.weight", "W_key.weight", "W_value.weight",
        "out_proj.weight", "out_proj.bias",
    ]  # fmt: skip
    for name, layer in zip(names, expected, strict=True):
        assert torch.equal(getattr(attn, name).weight, layer.weight)


def test_a_gate_that_lets_everything_through_is_multi_head_attention():
    torch.manual_seed(4)
    gated = GatedMultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2, qkv_bias=True)
    plain = MultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2, qkv_bias=True)
    plain.load_state_dict(gated.state_dict(), strict=False)
    with torch.no_grad():
        gated.W_gate.weight.zero_()
        gated.W_gate.bias.fill_(100.0)  # sigmoid(100) is 1.0 in float32
    x = torch.rand(2, 6, 3)
    assert torch.equal(gated(x), plain(x))
    with torch.no_grad():
        gated.W_gate.bias.zero_()  # sigmoid(0): every feature halved before out_proj
        plain.out_proj.weight.mul_(0.5)
    torch.testing.assert_close(gated(x), plain(x))


@pytest.mark.parametrize("cls", ["gated", "deltanet"])
def test_no_token_sees_a_later_one(cls):
    torch.manual_seed(5)
    layer = (
        GatedMultiHeadAttention(4, 8, 10, 0.0, 2) if cls == "gated" else GatedDeltaNet(4, 8, 0.0, 2)
    )
    x = torch.randn(1, 10, 4)
    changed = x.clone()
    changed[:, 6:] += 1.0
    out, out_changed = layer(x), layer(changed)
    torch.testing.assert_close(out[:, :6], out_changed[:, :6], rtol=0, atol=0)
    assert not torch.allclose(out[:, 6:], out_changed[:, 6:])


def test_deltanet_draws_its_parameters_in_the_bonus_order():
    torch.manual_seed(6)
    layer = GatedDeltaNet(5, 8, dropout=0.0, num_heads=2)
    torch.manual_seed(6)
    linears = [nn.Linear(5, 8, bias=False) for _ in range(5)] + [nn.Linear(5, 2, bias=False)]
    a_log = torch.log(torch.empty(2).uniform_(0, 16))
    out_proj = nn.Linear(8, 8)
    # named_parameters() lists a module's own parameters before its submodules'.
    assert [name for name, _ in layer.named_parameters()] == [
        "dt_bias", "A_log", "W_query.weight", "W_key.weight", "W_value.weight", "W_gate.weight",
        "W_beta.weight", "W_alpha.weight", "norm.weight", "out_proj.weight", "out_proj.bias",
    ]  # fmt: skip
    names = ["W_query", "W_key", "W_value", "W_gate", "W_beta", "W_alpha"]
    for name, linear in zip(names, linears, strict=True):
        assert torch.equal(getattr(layer, name).weight, linear.weight)
    assert torch.equal(layer.A_log, a_log) and torch.equal(layer.dt_bias, torch.ones(2))
    assert torch.equal(layer.out_proj.weight, out_proj.weight)


def delta_rule_by_matrices(layer: GatedDeltaNet, x: torch.Tensor) -> torch.Tensor:
    """The recurrence of the module docstring, one head and one token at a time, with @."""
    d, h = layer.head_dim, layer.num_heads
    q = layer.W_query(x).view(-1, h, d)
    k = layer.W_key(x).view(-1, h, d)
    v = layer.W_value(x).view(-1, h, d)
    beta = torch.sigmoid(layer.W_beta(x)).view(-1, h, d)
    rate = layer.A_log.exp() * nn.functional.softplus(layer.W_alpha(x) + layer.dt_bias)
    alpha = torch.exp(-rate)  # (T, h)
    outs = []
    for head in range(h):
        state = torch.zeros(d, d, dtype=x.dtype)
        rows = []
        for t in range(x.shape[0]):
            # Scaled to length 1, with the 1e-6 that keeps a zero vector at zero.
            q_t = q[t, head] / (q[t, head].square().sum() + 1e-6).sqrt()
            k_t = k[t, head] / (k[t, head].square().sum() + 1e-6).sqrt()
            state = alpha[t, head] * state
            error = v[t, head] - state.T @ k_t
            state = state + torch.outer(k_t, beta[t, head] * error)
            rows.append(state.T @ q_t / d**0.5)
        outs.append(torch.stack(rows))  # (T, d)
    context = layer.norm(torch.stack(outs, dim=1))  # (T, h, d)
    gated = context * nn.functional.silu(layer.W_gate(x).view(-1, h, d))
    return layer.out_proj(gated.reshape(x.shape[0], -1))


@pytest.mark.parametrize(("d_out", "num_heads"), [(8, 2), (12, 3), (6, 1)])
def test_deltanet_computes_the_gated_delta_rule(d_out, num_heads):
    torch.manual_seed(d_out)
    layer = GatedDeltaNet(5, d_out, 0.0, num_heads, qkv_bias=True).double()
    x = torch.randn(9, 5, dtype=torch.float64)
    torch.testing.assert_close(layer(x), delta_rule_by_matrices(layer, x), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("chunks", [[1] * 7, [3, 4], [2, 1, 4]])
def test_deltanet_cached_steps_equal_the_whole_sequence(chunks):
    torch.manual_seed(7)
    layer = GatedDeltaNet(6, 8, 0.0, 2).double()
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    expected = layer(x)
    steps, start = [], 0
    with torch.no_grad():
        for size in chunks:
            steps.append(layer(x[:, start : start + size], use_cache=True))
            start += size
    torch.testing.assert_close(torch.cat(steps, dim=1), expected.detach())
    assert layer.ptr_current_pos == 7


def test_deltanet_state_does_not_grow_with_the_context():
    layer = GatedDeltaNet(4, 8, 0.0, num_heads=2)
    sizes = []
    with torch.no_grad():
        for _ in range(3):
            layer(torch.randn(3, 50, 4), use_cache=True)
            assert layer.cache_state is not None
            sizes.append(tuple(layer.cache_state.shape))
    assert sizes == [(3, 2, 4, 4)] * 3
    with pytest.raises(ValueError, match=r"^x must continue the cached batch of 3 sequences; got"):
        layer(torch.randn(2, 1, 4), use_cache=True)
    layer(torch.randn(2, 1, 4))  # without the cache, a new batch is fine
    assert layer.cache_state is None and layer.ptr_current_pos == 0


def test_gated_attention_refuses_what_multi_head_attention_refuses():
    attn = GatedMultiHeadAttention(4, 8, context_length=5, dropout=0.0, num_heads=2)
    with pytest.raises(ValueError, match=r"^x has 6 tokens, more than context_length=5"):
        attn(torch.rand(1, 6, 4))
    with pytest.raises(ValueError, match=r"^d_out must be divisible by num_heads"):
        GatedMultiHeadAttention(4, 9, context_length=5, dropout=0.0, num_heads=2)
    with pytest.raises(ValueError, match=r"^d_out must be divisible by num_heads"):
        GatedDeltaNet(4, 9, dropout=0.0, num_heads=2)
    with pytest.raises(ValueError, match=r"^dropout must be"):
        GatedDeltaNet(4, 8, dropout=1.5, num_heads=2)
    with pytest.raises(TypeError, match=r"^qkv_bias must be a bool"):
        GatedDeltaNet(4, 8, 0.0, 2, qkv_bias="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^x must be torch.float32 like the module.s parameters"):
        attn(torch.rand(1, 5, 4, dtype=torch.float64))


@pytest.mark.parametrize("cls", ["gated", "deltanet"])
def test_dropout_is_one_draw_at_the_place_of_the_bonus_code(cls):
    # Gated attention drops attention weights, (b, h, T, T); Gated DeltaNet drops features
    # of the gated output, (b, T, d_out), just before out_proj. Either way it is the only
    # random draw of the forward pass, so the same seed gives the same mask as a bare draw.
    torch.manual_seed(8)
    layer = (
        GatedMultiHeadAttention(6, 8, 5, 0.4, 2) if cls == "gated" else GatedDeltaNet(6, 8, 0.4, 2)
    )
    x = torch.randn(3, 5, 6)
    seen: dict[str, torch.Tensor] = {}
    layer.out_proj.register_forward_pre_hook(lambda module, args: seen.update(mixed=args[0]))
    layer.dropout.register_forward_pre_hook(lambda module, args: seen.update(plain=args[0]))
    layer.dropout.register_forward_hook(lambda module, args, out: seen.update(dropped=out))
    torch.manual_seed(9)
    layer(x)
    shape = (3, 2, 5, 5) if cls == "gated" else (3, 5, 8)
    torch.manual_seed(9)
    mask = nn.functional.dropout(torch.ones(shape), p=0.4, training=True)
    assert seen["plain"].shape == shape
    torch.testing.assert_close(seen["dropped"], seen["plain"] * mask)
    if cls == "deltanet":  # nothing happens between the dropout and out_proj
        assert seen["mixed"] is seen["dropped"]
