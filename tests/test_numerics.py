"""Gradients, reduced precision, and dtype and device moves for every module."""

from __future__ import annotations

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

MODULES = {
    "SelfAttention_v1": lambda: SelfAttention_v1(5, 4),
    "SelfAttention_v2": lambda: SelfAttention_v2(5, 4, qkv_bias=True),
    "CausalAttention": lambda: CausalAttention(5, 4, 8, 0.0, qkv_bias=True),
    "MultiHeadAttentionWrapper": lambda: MultiHeadAttentionWrapper(5, 2, 8, 0.0, num_heads=2),
    "MultiHeadAttention": lambda: MultiHeadAttention(5, 4, 8, 0.0, num_heads=2),
    "FusedMultiHeadAttention": lambda: FusedMultiHeadAttention(5, 4, 8, 0.0, num_heads=2),
}


@pytest.mark.parametrize("name", MODULES)
def test_gradcheck_float64(name):
    torch.manual_seed(0)
    module = MODULES[name]().double()
    x = torch.randn(2, 6, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(module, (x,))


# Tolerance: 4 machine epsilons of the low-precision dtype (2**-7 for bfloat16, 2**-10 for
# float16), absolute and relative, against the same module in float64.
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", MODULES)
def test_low_precision_forward_on_cpu(name, dtype):
    torch.manual_seed(1)
    module = MODULES[name]().double()
    x = torch.randn(2, 8, 5, dtype=torch.float64)
    reference = module(x)
    low = module.to(dtype)(x.to(dtype))
    assert low.dtype == dtype
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(low.double(), reference, atol=4 * eps, rtol=4 * eps)


@pytest.mark.parametrize("name", ["CausalAttention", "MultiHeadAttention"])
def test_to_dtype_carries_the_mask_buffer(name):
    module = MODULES[name]()
    assert module.mask.dtype == torch.float32
    module.to(torch.float16)
    assert module.mask.dtype == torch.float16
    assert torch.equal(module.mask.bool(), torch.triu(torch.ones(8, 8), diagonal=1).bool())


@pytest.mark.parametrize("name", MODULES)
def test_state_dict_round_trip(name):
    torch.manual_seed(2)
    source = MODULES[name]()
    target = MODULES[name]()
    x = torch.randn(2, 6, 5)
    target.load_state_dict(source.state_dict())
    torch.testing.assert_close(target(x), source(x), rtol=0, atol=0)


# "meta" tensors have shapes and no data, and exist on every machine: a forward that made a
# tensor on the CPU instead of on its input's device would fail here. CUDA where there is one.
DEVICES = ["meta"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", MODULES)
def test_to_device_moves_every_parameter_and_buffer(name, device):
    module = MODULES[name]().to(device)
    tensors = [*module.parameters(), *module.buffers()]
    assert {t.device.type for t in tensors} == {device}
    out = module(torch.randn(2, 6, 5, device=device))
    assert (out.device.type, tuple(out.shape)) == (device, (2, 6, 4))
