"""attention_mechanisms.circuits: each reading of the weights against the model's own forward."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms.circuits import (
    head_outputs,
    logit_attribution,
    ov_circuit,
    qk_circuit,
    remove_from,
)
from attention_mechanisms.induction import AttentionOnlyTransformer
from attention_mechanisms.interpret import zero_heads
from attention_mechanisms.repeats import repeated_tokens
from attention_mechanisms.rope import apply_rope


@pytest.fixture
def model() -> AttentionOnlyTransformer:
    torch.manual_seed(11)
    return AttentionOnlyTransformer(20, 16, d_model=12, num_heads=3, num_layers=3).eval()


def data(n: int = 5):
    return repeated_tokens(
        n, 15, 20, run_lengths=(2, 4), generator=torch.Generator().manual_seed(2)
    )


def test_the_heads_outputs_add_up_to_each_blocks_output(model):
    ids, _ = data()
    outputs = head_outputs(model, ids)
    x = model.tok_emb(ids)
    with torch.no_grad():
        for block, per_head in zip(model.blocks, outputs, strict=True):
            assert per_head.shape == (5, 3, 16, 12)
            torch.testing.assert_close(per_head.sum(dim=1) + block.out_proj.bias, block(x))
            x = x + block(x)


def test_the_qk_circuit_is_the_score_of_the_blocks_own_query_and_key(model):
    """Query token a at position d, and at position 0 a key whose stream holds what layer 0's
    head 1 writes of token b: the score that layer 2's head 2 computes through its modules."""
    layer, head, earlier = model.blocks[2], 2, model.blocks[0]
    for distance in (1, 3, 11):
        circuit = qk_circuit(model, (2, head), (0, 1), distance)
        assert circuit.shape == (20, 20)
        for a, b in [(0, 0), (3, 7), (8, 2)]:
            written = (
                earlier.W_value(model.tok_emb.weight[b])[4:8] @ earlier.out_proj.weight[:, 4:8].T
            )
            stream = torch.zeros(distance + 1, 12)
            stream[0], stream[distance] = written, model.tok_emb.weight[a]
            q = layer.W_query(stream).view(1, distance + 1, 3, 4).transpose(1, 2)
            k = layer.W_key(stream).view(1, distance + 1, 3, 4).transpose(1, 2)
            q, k = apply_rope(q, layer.cos, layer.sin), apply_rope(k, layer.cos, layer.sin)
            score = q[0, head, distance] @ k[0, head, 0] / 2.0
            torch.testing.assert_close(circuit[a, b], score.detach(), rtol=1e-5, atol=1e-6)


def test_the_ov_circuit_is_what_the_head_writes_read_by_the_output_head(model):
    block = model.blocks[1]
    circuit = ov_circuit(model, 1, 0)
    for a in (0, 4, 8):
        written = block.W_value(model.tok_emb.weight[a])[0:4] @ block.out_proj.weight[:, 0:4].T
        torch.testing.assert_close(circuit[a], model.out_head(written).detach())


def test_the_attributions_and_the_rest_add_up_to_the_right_logit_above_the_mean(model):
    ids, repeated = data()
    attribution = logit_attribution(model, ids, repeated)
    assert attribution.shape == (3, 3)
    with torch.no_grad():
        logits = model(ids[:, :-1])[repeated[:, 1:]]  # (n, V)
        target = ids[:, 1:][repeated[:, 1:]]
        above = (logits.gather(1, target[:, None])[:, 0] - logits.mean(dim=1)).mean()
        direction = model.out_head.weight - model.out_head.weight.mean(dim=0)
        stream = model.tok_emb(ids[:, :-1])[repeated[:, 1:]] + sum(
            b.out_proj.bias for b in model.blocks
        )
        rest = (stream * direction[target]).sum(dim=1).mean()
    torch.testing.assert_close(attribution.sum() + rest, above, rtol=1e-4, atol=1e-5)


def test_removing_a_head_from_every_role_leaves_only_its_direct_path(model):
    """Out of every later layer's queries, keys and values, a head still adds to the
    logits directly: what the model computes with the head zeroed, plus that."""
    ids, _ = data()
    with torch.no_grad():
        direct = model.out_head(head_outputs(model, ids)[0][:, 1])
        with (
            remove_from(model, [(0, 1)], "query"),
            remove_from(model, [(0, 1)], "key"),
            remove_from(model, [(0, 1)], "value"),
        ):
            removed = model(ids)
        with zero_heads(model, [(0, 1)]):
            zeroed = model(ids)
        torch.testing.assert_close(removed, zeroed + direct, rtol=1e-5, atol=1e-5)
        with remove_from(model, [(0, 1)], "key"):
            assert not torch.allclose(model(ids), removed)
        assert not model.blocks[1].W_key._forward_pre_hooks  # the hooks are gone


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: remove_from(m, [(0, 1)], "keys").__enter__(), "role must be one of"),
        (lambda m: ov_circuit(m, 3, 0), r"layer must be in \[0, 3\); got 3"),
        (lambda m: ov_circuit(m, 0, 3), r"head must be in \[0, 3\); got 3 \(layer 0\)"),
        (lambda m: qk_circuit(m, (1, 0), (1, 0), 2), "previous must be in a layer before 1"),
        (lambda m: qk_circuit(m, (1, 0), (0, 0), 16), r"distance must be in \[0, 16\); got 16"),
        (lambda m: remove_from(m, [(2, 0)], "key").__enter__(), "a layer before the last"),
        (lambda m: remove_from(m, (0, 1), "key").__enter__(), r"heads must be a list of \(layer"),
        (lambda m: remove_from(m, [3], "key").__enter__(), r"heads must be a \(layer, head\) pair"),
        (
            lambda m: logit_attribution(
                m, *data(2)._replace(repeated=torch.zeros(2, 16, dtype=torch.bool))
            ),
            "marks no token",
        ),
    ],
)
def test_bad_arguments_are_named(model, call, message):
    with pytest.raises(ValueError, match=message):
        call(model)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m: ov_circuit(m, 1.0, 0),
            r"must be a \(layer, head\) pair of ints; got \(1.0, 0\)",
        ),
        (lambda m: qk_circuit(m, (1, 0), (0, 0), 2.0), "distance must be an int; got 2.0"),
    ],
)
def test_bad_types_are_named(model, call, message):
    with pytest.raises(TypeError, match=message):
        call(model)
