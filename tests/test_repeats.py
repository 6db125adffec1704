"""The chapter's task: a run of tokens that comes back wherever it stands."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms.repeats import SYMBOLS, VOCAB_SIZE, repeated_tokens, spell

LAYOUTS = [  # the defaults, and other layouts than the chapter's
    {},
    {"run_lengths": (2, 2), "copies": (4, 6), "gaps": (0, 3)},
    {"run_lengths": (5, 9), "copies": (2, 2), "gaps": (10, 20), "prefix": (0, 0)},
    {"run_lengths": (2, 3), "copies": (3, 3), "prefix": (20, 30)},
]


def earlier_pair(row: list[int], t: int) -> bool:
    """Token t and the one before it occur, in that order, earlier in the row."""
    return any(row[j - 1] == row[t - 1] and row[j] == row[t] for j in range(1, t))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("num_tokens", [48, 31])
def test_every_marked_token_continues_an_earlier_copy_and_no_other_repeats(layout, num_tokens):
    ids, repeated = repeated_tokens(
        300, num_tokens, generator=torch.Generator().manual_seed(3), **layout
    )
    assert ids.shape == repeated.shape == (300, 1 + num_tokens)
    assert (ids[:, 0] == VOCAB_SIZE).all() and not repeated[:, :2].any()
    assert ids[:, 1:].max() < VOCAB_SIZE and ids.min() >= 0
    for row, marks in zip(ids.tolist(), repeated.tolist(), strict=True):
        assert any(marks), "every row repeats its run at least once"
        for t in range(2, len(row)):
            if marks[t]:
                assert earlier_pair(row, t)
            elif row[t] in row[1:t]:  # distinct: only a later copy's first token repeats
                assert t + 1 < len(row) and marks[t + 1]


def test_the_ranges_are_honoured():
    generator = torch.Generator().manual_seed(4)
    ids, repeated = repeated_tokens(
        500, 40, run_lengths=(3, 3), copies=(4, 4), gaps=(2, 2), prefix=(5, 5), generator=generator
    )
    marked = repeated.nonzero()[:, 1].view(500, -1)  # 3 later copies of 2 marked tokens
    expected = torch.tensor([1 + 5 + k * 5 + i for k in (1, 2, 3) for i in (1, 2)])
    assert torch.equal(marked, expected.expand(500, -1))
    run = ids[:, 6:9]
    for k in (1, 2, 3):
        assert torch.equal(ids[:, 6 + 5 * k : 9 + 5 * k], run)


def test_the_classic_task_is_one_copy_twice_after_the_start_token():
    ids, repeated = repeated_tokens(
        50, 10, run_lengths=(5, 5), copies=(2, 2), gaps=(0, 0), prefix=(0, 0),
        generator=torch.Generator().manual_seed(5),
    )  # fmt: skip
    assert torch.equal(ids[:, 1:6], ids[:, 6:])
    assert repeated[:, 7:].all() and not repeated[:, :7].any()


def test_with_replacement_a_token_can_occur_twice_and_the_generator_decides():
    first = repeated_tokens(200, 48, 8, distinct=False, generator=torch.Generator().manual_seed(1))
    again = repeated_tokens(200, 48, 8, distinct=False, generator=torch.Generator().manual_seed(1))
    assert torch.equal(first.ids, again.ids) and torch.equal(first.repeated, again.repeated)
    tokens = first.ids[0, 1:].tolist()
    assert len(set(tokens)) < len(tokens)  # 48 tokens of 8 repeat
    torch.manual_seed(0)
    seeded = repeated_tokens(2)
    torch.manual_seed(0)
    assert torch.equal(seeded.ids, repeated_tokens(2).ids)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_tokens": 0}, ValueError, "num_tokens must be a positive int; got 0"),
        ({"run_lengths": (3,)}, ValueError, r"run_lengths must be \(low, high\); got \(3,\)"),
        ({"copies": (1, 3)}, ValueError, r"copies must be two ints of at least 2; got \(1, 3\)"),
        (
            {"gaps": (4, 2)},
            ValueError,
            r"gaps must be \(low, high\) with low <= high; got \(4, 2\)",
        ),
        ({"copies": (2, 9)}, ValueError, r"copies must be at most 8; got \(2, 9\)"),
        (
            {"num_tokens": 8, "copies": (3, 3), "run_lengths": (3, 4)},
            ValueError,
            "3 copies of 3 tokens with gaps of 0 after a prefix of 0 take 9 tokens, more than "
            "num_tokens=8",
        ),
        ({"run_lengths": (1, 3)}, ValueError, r"run_lengths must be two ints of at least 2"),
        ({"num_tokens": 48, "vocab_size": 40}, ValueError, "distinct tokens need vocab_size >= "),
        ({"generator": 123}, TypeError, "generator must be a torch.Generator or None; got"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        repeated_tokens(2, **kwargs)


def test_a_layout_that_does_not_fit_names_its_sizes():
    with pytest.raises(ValueError, match="3 copies of 4 tokens with gaps of 1 after a prefix of 2 "
                       "take 16 tokens, more than num_tokens=15"):  # fmt: skip
        repeated_tokens(2, 15, run_lengths=(4, 5), copies=(2, 3), gaps=(1, 2), prefix=(2, 3))


def test_spell_writes_one_character_per_token():
    assert spell([VOCAB_SIZE, 0, 26, 52, 63]) == "^aA0!" and len(SYMBOLS) == VOCAB_SIZE
