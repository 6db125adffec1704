"""The chapter "What attention learns" lands on the same verdicts whatever the seed.

Each verdict is a property that the chapter checks of its one training run (seed 123), the
exercises aside. The chapter says that at least 11 of 12 seeds land on all of them: this
test trains twelve models (about 15 s each on one core) and counts.
"""

from __future__ import annotations

import math

import pytest
import torch

from attention_mechanisms.circuits import logit_attribution, ov_circuit, qk_circuit, remove_from
from attention_mechanisms.induction import train_induction
from attention_mechanisms.interpret import (
    attention_patterns,
    copy_accuracy,
    head_scores,
    zero_heads,
)
from attention_mechanisms.repeats import VOCAB_SIZE, repeated_tokens

SEEDS = range(12)
KINDS = [  # the chapter's kinds of sequence
    {},
    {"copies": (2, 2)},
    {"copies": (3, 3)},
    {"run_lengths": (2, 2)},
    {"copies": (2, 2), "run_lengths": (16, 24)},
    {"copies": (2, 2), "gaps": (0, 0), "prefix": (0, 0)},
    {"copies": (2, 2), "run_lengths": (2, 8), "prefix": (24, 48)},
    {"copies": (4, 4), "run_lengths": (2, 10)},
    {"copies": (2, 2), "run_lengths": (2, 8), "gaps": (16, 30)},
]  # the chapter's last kind, a run of 2 after 40, it prints but does not check


def rise_within_drop(losses: list[float], steps: list[int], values: list[float]) -> bool:
    smooth = torch.tensor(losses).unfold(0, 20, 1).mean(dim=1)
    start, end = smooth[:100].mean(), smooth[-100:].mean()
    below = [int((smooth < start - f * (start - end)).nonzero()[0]) + 20 for f in (0.1, 0.9)]
    halfway = (values[0] + values[-1]) / 2
    rise = next(step for step, v in zip(steps, values, strict=True) if v >= halfway)
    return below[0] - 20 <= rise <= below[1] + 20


def by_position_accuracy(model, test) -> list[float]:
    """Accuracy at the marked tokens of each position that has at least 50 of them."""
    with torch.no_grad():
        right = model(test.ids[:, :-1]).argmax(-1) == test.ids[:, 1:]
    marked = test.repeated[:, 1:]
    return [
        right[:, t][marked[:, t]].float().mean().item()
        for t in range(marked.shape[1])
        if marked[:, t].sum() >= 50
    ]


def candidate_share(model, generator: torch.Generator) -> float:
    """Of the ambiguous predictions (drawn with replacement), the share that is a token which
    followed an earlier occurrence of the current one."""
    ids, marks = repeated_tokens(1000, distinct=False, generator=generator)
    with torch.no_grad():
        guesses = model(ids[:, :-1]).argmax(dim=-1).tolist()
    ambiguous = candidates = 0
    for row, marked, guess in zip(ids.tolist(), marks, guesses, strict=True):
        for t in marked[1:].nonzero().flatten().tolist():
            after = {row[j + 1] for j in range(t) if row[j] == row[t]}
            if len(after) >= 2:
                ambiguous += 1
                candidates += guess[t] in after
    return candidates / ambiguous


def verdicts(seed: int) -> dict[str, bool]:
    model, losses, history = train_induction(seed=seed)
    generator = torch.Generator().manual_seed(2024)
    tests = [repeated_tokens(1000, generator=generator, **kind) for kind in KINDS]
    accuracy = [copy_accuracy(model, *test) for test in tests]
    test = tests[0]
    previous, prefix = head_scores(model, *test)
    prev_head, ind_head = int(previous[0].argmax()), int(prefix[1].argmax())
    weights = attention_patterns(model, test.ids)[0][:, prev_head]
    positions = torch.arange(1, test.ids.shape[1])
    by_position = weights[:, positions, positions - 1].mean(dim=0)  # (48,)
    marked = accuracy[0][1]

    def without(heads: list[tuple[int, int]]) -> float:
        with zero_heads(model, heads):
            return copy_accuracy(model, *test)[1]

    induction_heads = [(1, h) for h in range(2) if prefix[1, h] >= 0.5]
    previous_heads = [(0, h) for h in range(2) if previous[0, h] >= 0.5]

    def removed(role: str) -> float:
        with remove_from(model, previous_heads, role):
            return copy_accuracy(model, *test)[1]

    others = [
        (layer, h)
        for layer in range(2)
        for h in range(2)
        if (layer, h) not in induction_heads + previous_heads
    ]
    diagonal = torch.arange(VOCAB_SIZE)
    qk = [qk_circuit(model, (1, ind_head), (0, prev_head), d).argmax(1) for d in (1, 5, 10, 20)]
    attribution = logit_attribution(model, *test)
    return {
        "both scores rise within the drop": all(
            rise_within_drop(losses, history.steps, values)
            for values in (history.previous_token, history.induction)
        ),
        "every kind at least 0.95, others at most twice chance": all(
            m >= 0.95 and o <= 2 / VOCAB_SIZE for o, m in accuracy
        ),
        "head scores": bool(previous[0].max() >= 0.8 and prefix[1].max() >= 0.9),
        "previous token from position 2 to 32": bool(by_position[1:32].min() >= 0.9),
        "copies at every position": all(a >= 0.9 for a in by_position_accuracy(model, test)),
        "ablations": without(induction_heads) < 0.5
        and without(previous_heads) < 0.5
        and all(marked - without([h]) < 0.05 for h in others),
        "K-composition": removed("key") < 0.5
        and removed("query") >= 0.9
        and removed("value") >= 0.9,
        "circuits": all(int((p == diagonal).sum()) >= 60 for p in qk)
        and int((ov_circuit(model, 1, ind_head).argmax(1) == diagonal).sum()) >= 60,
        "direct logit attribution": bool(attribution[0].abs().sum() <= 0.1 * attribution[1].sum()),
        "first loss above ln 64": losses[0] > math.log(VOCAB_SIZE),
        "a candidate when ambiguous": candidate_share(model, generator) >= 0.9,
    }


@pytest.mark.slow
def test_eleven_of_twelve_seeds_land_on_every_verdict():
    failed = {seed: [name for name, ok in verdicts(seed).items() if not ok] for seed in SEEDS}
    failed = {seed: names for seed, names in failed.items() if names}
    print(f"{len(SEEDS) - len(failed)} of {len(SEEDS)} seeds land on every verdict")
    assert len(failed) <= 1, f"seeds that missed a verdict: {failed}"
