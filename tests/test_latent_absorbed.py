"""Absorbed multi-head latent attention: the plain path's outputs, computed in the latent space."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms import MultiHeadLatentAttention

TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}


def pair(dtype: torch.dtype, bias: bool, dropout: float = 0.0, **sizes: int):
    """A plain and an absorbed module with the same parameters, drawn from one seed."""
    sizes = {"d_in": 12, "d_out": 24, "num_heads": 3, "latent_dim": 5, **sizes}
    modules = []
    for absorb in (False, True):
        torch.manual_seed(7)
        modules.append(
            MultiHeadLatentAttention(dropout=dropout, qkv_bias=bias, absorb=absorb, **sizes).to(
                dtype
            )
        )
    return modules


@torch.no_grad()
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias", [False, True])
def test_a_whole_sequence_gives_the_plain_outputs(dtype, bias):
    plain, absorbed = pair(dtype, bias)
    assert [n for n, _ in plain.named_parameters()] == [n for n, _ in absorbed.named_parameters()]
    for name, value in plain.state_dict().items():
        assert torch.equal(value, absorbed.state_dict()[name])  # the same draws, bit for bit
    x = torch.randn(3, 13, 12, dtype=dtype) * 2
    difference = (absorbed(x) - plain(x)).abs().max().item()
    assert difference <= TOLERANCE[dtype]
    assert absorbed(x[0]).shape == (13, 24)  # one sequence in, one out


@torch.no_grad()
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("chunks", [[1] * 9, [4, 1, 4], [2, 7]])
def test_chunked_cache_calls_give_the_plain_outputs(dtype, chunks):
    plain, absorbed = pair(dtype, bias=True, d_in=8, d_out=16, num_heads=4, latent_dim=6)
    x = torch.randn(2, 9, 8, dtype=dtype)
    full = plain(x)
    parts, start = [], 0
    for size in chunks:
        parts.append(absorbed(x[:, start : start + size], use_cache=True))
        start += size
    assert (torch.cat(parts, dim=1) - full).abs().max().item() <= TOLERANCE[dtype]
    assert absorbed.cache_c_kv.shape == (2, 9, 6)  # the latents, and nothing else
    assert absorbed.ptr_current_pos == 9


def test_dropout_draws_the_same_weights_and_the_value_bias_follows_them():
    # With dropout the weights of a row no longer sum to 1: the value bias must be
    # weighted by their sum, as the plain path's values carry it.
    plain, absorbed = pair(torch.float64, bias=True, dropout=0.5)
    x = torch.randn(2, 6, 12, dtype=torch.float64)
    torch.manual_seed(11)
    expected = plain(x)
    torch.manual_seed(11)
    got = absorbed(x)
    assert (got - expected).abs().max().item() <= 1e-10


def test_gradients_flow_to_every_parameter_as_in_the_plain_path():
    plain, absorbed = pair(torch.float64, bias=True)
    x = torch.randn(2, 7, 12, dtype=torch.float64)
    plain(x).square().sum().backward()
    absorbed(x).square().sum().backward()
    for (name, p), q in zip(plain.named_parameters(), absorbed.parameters(), strict=True):
        if name == "W_UK.bias":  # q . b_UK shifts a whole row of scores: softmax ignores it
            assert q.grad is None or q.grad.abs().max() == 0
            assert p.grad.abs().max() < 1e-10
            continue
        torch.testing.assert_close(q.grad, p.grad, rtol=0, atol=1e-10, msg=name)


def test_absorb_must_be_a_bool():
    with pytest.raises(TypeError, match=r"^absorb must be"):
        MultiHeadLatentAttention(4, 4, 0.0, 2, absorb="yes")


@torch.no_grad()
@pytest.mark.parametrize(
    "sizes",
    [
        {"d_in": 5, "d_out": 6, "num_heads": 1, "latent_dim": 9},  # a latent wider than a head
        {"d_in": 7, "d_out": 12, "num_heads": 6, "latent_dim": 1},  # a latent of one number
    ],
)
def test_one_unbatched_sequence_fed_in_pieces_gives_the_plain_outputs(sizes):
    plain, absorbed = pair(torch.float64, bias=True, **sizes)
    x = torch.randn(9, sizes["d_in"], dtype=torch.float64)  # (T, d_in): no batch dimension
    parts = [absorbed(x[a:b], use_cache=True) for a, b in [(0, 1), (1, 8), (8, 9)]]
    assert (torch.cat(parts) - plain(x)).abs().max().item() <= 1e-10
