"""What every class of "Attention in today's LLMs" shares: gradients, devices, modes, state."""

from __future__ import annotations

import copy

import pytest
import torch

from attention_mechanisms import (
    GatedDeltaNet,
    GroupedQueryAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadLatentAttention,
)

BUILDERS = {
    "grouped": lambda dropout=0.0: GroupedQueryAttention(6, 8, dropout, 4, 2, qkv_bias=True),
    "window": lambda dropout=0.0: MultiHeadAttentionWithSWA(6, 8, dropout, 2, True, 3),
    "latent": lambda dropout=0.0: MultiHeadLatentAttention(6, 8, dropout, 2, True, 3),
    "deltanet": lambda dropout=0.0: GatedDeltaNet(6, 8, dropout, 2, True),
}
KINDS = list(BUILDERS)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_match_finite_differences_in_float64(kind):
    torch.manual_seed(0)
    module = BUILDERS[kind]().double()
    x = torch.randn(2, 5, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(module, (x,), eps=1e-6, atol=1e-5)
    params = tuple(module.parameters())
    assert torch.autograd.gradcheck(
        lambda *ps: torch.func.functional_call(
            module, dict(zip([n for n, _ in module.named_parameters()], ps, strict=True)), (x,)
        ),
        params,
        eps=1e-6,
        atol=1e-5,
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_cache_moves_with_the_module_and_is_not_saved(kind):
    torch.manual_seed(1)
    module = BUILDERS[kind]()
    with torch.no_grad():
        module(torch.randn(2, 4, 6), use_cache=True)
    names = [name for name, _ in module.named_buffers()]
    assert names and all(name.startswith("cache_") for name in names)
    assert not any(key.startswith("cache_") for key in module.state_dict())
    module.to(torch.float64)
    assert {b.dtype for b in module.buffers()} == {torch.float64}
    module.to("meta")
    assert {b.device.type for b in module.buffers()} == {"meta"}
    assert {p.device.type for p in module.parameters()} == {"meta"}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("kind", KINDS)
def test_on_cuda_it_computes_what_it_computes_on_cpu(kind):
    torch.manual_seed(2)
    module = BUILDERS[kind]().double()
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    expected = module(x)
    on_gpu = copy.deepcopy(module).to("cuda")
    with torch.no_grad():
        steps = [on_gpu(x[:, t : t + 1].cuda(), use_cache=True) for t in range(7)]
    torch.testing.assert_close(torch.cat(steps, dim=1).cpu(), expected.detach())


@pytest.mark.parametrize("kind", KINDS)
def test_dropout_only_in_training(kind):
    torch.manual_seed(3)
    module = BUILDERS[kind](dropout=0.5)
    plain = BUILDERS[kind]()
    plain.load_state_dict(module.state_dict())
    x = torch.randn(2, 6, 6)
    module.eval()
    torch.testing.assert_close(module(x), plain(x))
    module.train()
    assert not torch.allclose(module(x), plain(x))


@pytest.mark.parametrize("kind", KINDS)
def test_one_sequence_without_a_batch_dimension(kind):
    torch.manual_seed(4)
    module = BUILDERS[kind]()
    x = torch.randn(5, 6)
    out = module(x)
    assert out.shape == (5, 8)
    torch.testing.assert_close(out, module(x.unsqueeze(0))[0])


@pytest.mark.parametrize("kind", KINDS)
def test_reset_cache_starts_a_new_sequence(kind):
    torch.manual_seed(5)
    module = BUILDERS[kind]()
    first, second = torch.randn(1, 4, 6), torch.randn(3, 2, 6)
    with torch.no_grad():
        module(first, use_cache=True)
        module.reset_cache()
        assert module.ptr_current_pos == 0
        torch.testing.assert_close(module(second, use_cache=True), module(second))


@pytest.mark.parametrize("kind", KINDS)
def test_input_errors_match_the_other_modules(kind):
    module = BUILDERS[kind]()
    with pytest.raises(ValueError, match=r"^x must have last dimension d_in=6"):
        module(torch.ones(1, 5, 4))
    with pytest.raises(TypeError, match=r"^x must have a floating-point dtype"):
        module(torch.ones(1, 5, 6, dtype=torch.long))
    with pytest.raises(ValueError, match=r"^x must be 2-D \(num_tokens, d_in\) or 3-D"):
        module(torch.ones(6))
