"""FusedMultiHeadAttention and its KV cache: the same function as MultiHeadAttention."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms import FusedMultiHeadAttention, KVCache, MultiHeadAttention


def pair(dtype: torch.dtype, qkv_bias: bool = True, seed: int = 0):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(12, 24, 32, 0.0, num_heads=4, qkv_bias=qkv_bias).to(dtype)
    return mha, FusedMultiHeadAttention.from_multihead_attention(mha)


@pytest.mark.parametrize(("dtype", "tolerance"), [(torch.float64, 1e-10), (torch.float32, 1e-5)])
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_same_output_as_multihead_attention(dtype, tolerance, qkv_bias):
    mha, fused = pair(dtype, qkv_bias)
    x = torch.randn(3, 17, 12, dtype=dtype)
    assert fused.qkv.weight.dtype == dtype
    assert (fused(x) - mha(x)).abs().max() <= tolerance
    assert (fused(x[0]) - mha(x[0])).abs().max() <= tolerance  # unbatched input


def test_same_gradients_as_multihead_attention():
    mha, fused = pair(torch.float64)
    x = torch.randn(2, 9, 12, dtype=torch.float64, requires_grad=True)
    (grad_mha,) = torch.autograd.grad(mha(x).square().sum(), x)
    (grad_fused,) = torch.autograd.grad(fused(x).square().sum(), x)
    torch.testing.assert_close(grad_fused, grad_mha, rtol=0, atol=1e-10)


def test_parameter_count_matches():
    mha, fused = pair(torch.float32, qkv_bias=False)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(fused) == count(mha)


@pytest.mark.parametrize("no_grad", [torch.no_grad, torch.inference_mode])
def test_token_by_token_with_a_cache_equals_one_full_pass(no_grad):
    _, fused = pair(torch.float64)
    x = torch.randn(2, 20, 12, dtype=torch.float64)
    full = fused(x)  # with gradients on, no cache
    with no_grad():  # the cache is for inference
        cache = KVCache()
        steps = [fused(x[:, t : t + 1], kv_cache=cache) for t in range(20)]
    assert len(cache) == 20
    torch.testing.assert_close(torch.cat(steps, dim=1), full.detach(), rtol=0, atol=1e-12)


@torch.no_grad()  # the cache is for inference
def test_chunks_after_a_cache_are_aligned_with_the_last_positions():
    # Several queries at once after a cache: query i must see keys up to S + i, not up to i.
    _, fused = pair(torch.float64)
    x = torch.randn(1, 15, 12, dtype=torch.float64)
    cache = KVCache()
    chunks = [fused(x[:, :6], kv_cache=cache), fused(x[:, 6:11], kv_cache=cache)]
    chunks.append(fused(x[:, 11:], kv_cache=cache))
    torch.testing.assert_close(torch.cat(chunks, dim=1), fused(x), rtol=0, atol=1e-12)


def test_dropout_in_training_only():
    torch.manual_seed(1)
    fused = FusedMultiHeadAttention(8, 8, 16, dropout=0.5, num_heads=2)
    x = torch.randn(2, 10, 8)
    fused.eval()
    torch.testing.assert_close(fused(x), fused(x))
    no_dropout = FusedMultiHeadAttention(8, 8, 16, dropout=0.0, num_heads=2)
    no_dropout.load_state_dict(fused.state_dict())
    torch.testing.assert_close(fused(x), no_dropout(x))
    fused.train()
    assert not torch.allclose(fused(x), no_dropout(x))


@torch.no_grad()
def test_validation_matches_the_other_modules():
    with pytest.raises(ValueError, match=r"^d_out must be divisible by num_heads; got d_out=10"):
        FusedMultiHeadAttention(3, 10, 6, 0.0, num_heads=4)
    with pytest.raises(ValueError, match=r"^dropout must be a float in \[0, 1\); got 1.0$"):
        FusedMultiHeadAttention(3, 4, 6, 1.0, num_heads=2)
    fused = FusedMultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
    with pytest.raises(ValueError, match=r"^x has 7 tokens, more than context_length=6"):
        fused(torch.ones(1, 7, 3))
    with pytest.raises(ValueError, match=r"^x must have last dimension d_in=3"):
        fused(torch.ones(1, 5, 4))
    with pytest.raises(TypeError, match=r"^x must have a floating-point dtype"):
        fused(torch.ones(1, 5, 3, dtype=torch.long))
    cache = KVCache()
    fused(torch.ones(1, 4, 3), kv_cache=cache)
    with pytest.raises(ValueError, match=r"^x has 3 tokens and kv_cache holds 4, more than"):
        fused(torch.ones(1, 3, 3), kv_cache=cache)
    with pytest.raises(TypeError, match=r"^mha must be a MultiHeadAttention; got Linear$"):
        FusedMultiHeadAttention.from_multihead_attention(torch.nn.Linear(2, 2))


@torch.no_grad()
def test_a_cache_with_a_capacity_is_allocated_once():
    _, fused = pair(torch.float64)
    x = torch.randn(2, 20, 12, dtype=torch.float64)
    cache = KVCache(capacity=fused.context_length)
    fused(x[:, :1], kv_cache=cache)
    storage = cache.keys.untyped_storage().data_ptr()
    steps = [fused(x[:, t : t + 1], kv_cache=cache) for t in range(1, 20)]
    assert cache.keys.untyped_storage().data_ptr() == storage  # written in place, never copied
    assert len(cache) == 20
    torch.testing.assert_close(torch.cat(steps, dim=1), fused(x)[:, 1:], rtol=0, atol=1e-12)


def test_a_growing_cache_doubles_its_storage_instead_of_copying_every_step():
    cache = KVCache()
    storages = set()
    for _ in range(100):
        keys, _ = cache.append(torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
        storages.add(keys.untyped_storage().data_ptr())
    assert len(cache) == 100
    assert len(storages) <= 8  # 1, 2, 4, ..., 128 positions: 8 allocations for 100 steps


@torch.no_grad()
def test_reset_empties_the_cache_for_a_new_batch():
    _, fused = pair(torch.float64)
    cache = KVCache()
    fused(torch.randn(2, 5, 12, dtype=torch.float64), kv_cache=cache)
    cache.reset()
    assert len(cache) == 0 and cache.keys is None
    x = torch.randn(3, 4, 12, dtype=torch.float64)
    torch.testing.assert_close(fused(x, kv_cache=cache), fused(x), rtol=0, atol=1e-12)


@torch.no_grad()
def test_the_cache_names_what_does_not_fit():
    _, fused = pair(torch.float64)
    cache = KVCache()
    fused(torch.randn(2, 3, 12, dtype=torch.float64), kv_cache=cache)
    with pytest.raises(ValueError, match=r"^x holds a batch of 1, but kv_cache holds keys for a"):
        fused(torch.randn(1, 1, 12, dtype=torch.float64), kv_cache=cache)
    kv = torch.zeros(2, 3, 1, 4, dtype=torch.float64)  # heads and head size of another module
    with pytest.raises(ValueError, match=r"^keys must be \(batch=2, num_heads=4, num_tokens, hea"):
        cache.append(kv, kv)
    kv = torch.zeros(2, 4, 1, 6)
    with pytest.raises(ValueError, match=r"^keys must be torch.float64 on cpu like the cached"):
        cache.append(kv, kv)
    kv = torch.zeros(2, 4, 1, 6, dtype=torch.float64, device="meta")
    with pytest.raises(ValueError, match=r"^keys must be torch.float64 on cpu .* on meta$"):
        cache.append(kv, kv)
    with pytest.raises(ValueError, match=r"^values must be torch.float64 on cpu like keys"):
        cache.append(torch.zeros(2, 4, 1, 6, dtype=torch.float64), torch.zeros(2, 4, 1, 6))
    with pytest.raises(ValueError, match=r"^keys and values must both be \(batch, num_heads, num"):
        cache.append(torch.zeros(2, 2, 6), torch.zeros(2, 2, 6))
    with pytest.raises(TypeError, match=r"^keys must have a floating-point dtype"):
        cache.append(torch.zeros(2, 2, 1, 6, dtype=torch.long), torch.zeros(2, 2, 1, 6))
    small = KVCache(capacity=4)
    small.append(torch.zeros(1, 1, 3, 2), torch.zeros(1, 1, 3, 2))
    with pytest.raises(ValueError, match=r"^keys has 2 tokens and the cache holds 3, more than ca"):
        small.append(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2))
    with pytest.raises(ValueError, match=r"^capacity must be a positive int; got 0$"):
        KVCache(capacity=0)


FOR_INFERENCE = (
    "KVCache is for inference (wrap generation in torch.no_grad() or torch.inference_mode())"
)


def test_the_cache_refuses_tensors_that_require_grad():
    # Written in place step after step, a cache breaks backward across steps: it says so.
    cache = KVCache()
    grad, plain = torch.zeros(1, 2, 3, 4, requires_grad=True), torch.zeros(1, 2, 3, 4)
    for keys, values, name in ((grad, plain, "keys"), (plain, grad, "values")):
        with pytest.raises(ValueError) as raised:
            cache.append(keys, values)
        assert str(raised.value) == (
            f"{name} must not require grad: {FOR_INFERENCE}; got a tensor with requires_grad=True"
        )
    assert len(cache) == 0 and cache.keys is None  # nothing was written
    keys, _ = cache.append(grad.detach(), plain)
    assert len(cache) == 3 and not keys.requires_grad


def test_a_cache_with_gradients_on_names_the_situation():
    _, fused = pair(torch.float64)
    cache = KVCache()
    x = torch.randn(2, 3, 12, dtype=torch.float64)
    with pytest.raises(ValueError) as raised:
        fused(x, kv_cache=cache)  # grad mode on, and the parameters require grad
    assert str(raised.value) == (
        f"kv_cache must be used with gradients off: {FOR_INFERENCE}; got grad mode on and the "
        "module's parameters requiring grad"
    )
    fused.requires_grad_(False)
    with pytest.raises(ValueError, match=r"got grad mode on and x requiring grad$"):
        fused(x.clone().requires_grad_(), kv_cache=cache)
    assert len(cache) == 0  # the cache is left as it was
    # Frozen parameters and an input without grad: the keys need no grad, so the cache works.
    torch.testing.assert_close(fused(x, kv_cache=cache), fused(x), rtol=0, atol=1e-12)
    assert len(cache) == 3


def test_after_a_backward_pass_a_cache_generates_like_the_uncached_modules():
    # Gradients without a cache, then generation under no_grad with one: the same outputs.
    mha, fused = pair(torch.float64)
    x = torch.randn(2, 8, 12, dtype=torch.float64)
    fused(x).square().sum().backward()
    assert fused.qkv.weight.grad is not None
    with torch.no_grad():
        cache = KVCache(capacity=fused.context_length)
        steps = torch.cat([fused(x[:, t : t + 1], kv_cache=cache) for t in range(8)], dim=1)
        torch.testing.assert_close(steps, fused(x), rtol=0, atol=1e-12)
        torch.testing.assert_close(steps, mha(x), rtol=0, atol=1e-10)
