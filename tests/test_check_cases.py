"""attention-check, one check at a time: the correct notebook ``renamed.py`` with one line
changed breaks exactly one check, and the message says why. Checked in this process
(`checking.check_source`): the separate process is tested in test_check.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from checking import check_source, failures, message

from attention_mechanisms.check.checks import CHECKS

RENAMED = (Path(__file__).parent / "fixtures" / "check" / "renamed.py").read_text(encoding="utf-8")


def in_class(name: str, old: str, new: str, count: int = 1) -> str:
    """The renamed notebook with ``old`` replaced in class ``name`` only."""
    cells = RENAMED.split("# %%\n")
    (index,) = [i for i, cell in enumerate(cells) if f"class {name}(" in cell]
    assert cells[index].count(old) == count, (name, old)
    cells[index] = cells[index].replace(old, new)
    return "# %%\n".join(cells)


CAUSAL_MASK_LINE = (
    "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)"
)
BROKEN = {
    "constructs": in_class(
        "SelfAttention_v2",
        "def __init__(self, embedding_dim, output_dim, bias=False):",
        "def __init__(self, embedding_dim, output_dim, vocabulary, bias=False):",
    ),
    "runs": in_class("SelfAttention_v2", "keys = self.key(x)", "keys = self.key(x, x)"),
    "shape": in_class("SelfAttention_v2", "return attn_weights @ values", "return attn_weights"),
    "matches_book": in_class(
        "SelfAttention_v2", "return attn_weights @ values", "return attn_weights @ values + 1"
    ),
    "scale": in_class("SelfAttention_v2", "attn_scores / keys.shape[-1] ** 0.5", "attn_scores"),
    "softmax_dim": in_class("SelfAttention_v2", "dim=-1)", "dim=0)"),
    "causal": in_class(
        "CausalAttention",
        "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)"
        "\n        ",
        "",
    ),
    "diagonal": in_class("CausalAttention", "diagonal=1", "diagonal=0"),
    "weights_sum": in_class(
        "CausalAttention",
        "attn_weights = self.dropout(attn_weights)",
        "attn_weights = attn_weights * (1 - self.mask[:num_tokens, :num_tokens])\n"
        "        attn_weights = self.dropout(attn_weights)",
    ).replace(
        f"        {CAUSAL_MASK_LINE}\n",
        "",
        1,
    ),
    "mask_buffer": in_class(
        "CausalAttention",
        'self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size), diagonal=1))',
        "self.mask = torch.triu(torch.ones(block_size, block_size), diagonal=1)",
    ),
    "dropout": in_class(
        "CausalAttention",
        "attn_weights = self.dropout(attn_weights)\n        return attn_weights @ values",
        "return self.dropout(attn_weights @ values)",
    ),
    "heads": in_class(
        "MultiHeadAttention",
        ".view(b, num_tokens, self.head_count, self.head_dim).transpose(1, 2)",
        ".view(b, num_tokens, self.head_dim, self.head_count).permute(0, 3, 1, 2)",
        count=3,
    ).replace(
        "(attn_weights @ values).transpose(1, 2)", "(attn_weights @ values).permute(0, 2, 3, 1)"
    ),
    "out_proj": in_class(
        "MultiHeadAttention", "return self.out_proj(context_vec)", "return context_vec"
    ),
}


# The checks of today's attention alone: test_check_todays.py breaks each.
TODAYS_CHECKS = {"window", "kv_groups", "rotation"}
CHAPTER_3_CHECKS = [check for check in CHECKS if check not in TODAYS_CHECKS]


def test_every_check_has_a_notebook_that_breaks_it():
    assert set(BROKEN) == set(CHAPTER_3_CHECKS)


# A mask multiplied in after the softmax hides the later tokens' weights, but the softmax's
# denominator has already summed them: the earlier tokens' outputs still depend on them.
ALSO_BROKEN = {"weights_sum": {"causal"}}


@pytest.mark.parametrize("check", CHAPTER_3_CHECKS)
def test_a_notebook_that_breaks_one_check_fails_that_check_alone(check):
    report = check_source(BROKEN[check])
    assert set().union(*failures(report).values()) == {check} | ALSO_BROKEN.get(check, set())
    for component in report["components"]:
        for result in component["checks"]:
            if result["status"] == "fail" and check not in ("shape", "constructs", "runs"):
                assert "(see https://" in result["message"]


def test_the_messages_name_the_cause():
    cases = {
        "scale": "the scores are not scaled: divide them by keys.shape[-1] ** 0.5",
        "softmax_dim": "the softmax normalises over the queries (dim=-2 or 0): use dim=-1",
        "causal": "later tokens are not hidden",
        "diagonal": "the mask hides each token from itself too: triu needs diagonal=1",
        "mask_buffer": "CausalAttention: self.mask is a plain attribute; register it",
        "out_proj": "the output projection is never applied",
        "heads": "each head takes every num_heads-th column",
        "dropout": "dropout acts on the output, not on the attention weights",
        "weights_sum": "the weights are multiplied by the mask after the softmax, so each row",
    }
    for check, expected in cases.items():
        report = check_source(BROKEN[check])
        texts = [
            k["message"] for c in report["components"] for k in c["checks"] if k["status"] == "fail"
        ]
        assert any(expected in text for text in texts), (check, texts)


UNSCALED_MHA = in_class("MultiHeadAttention", "attn_scores / keys.shape[-1] ** 0.5", "attn_scores")
FINITE_FILL = in_class("CausalAttention", "diagonal=1", "diagonal=0").replace(
    "-torch.inf)\n        attn_weights = torch.softmax",
    "-1e9)\n        attn_weights = torch.softmax",
    1,
)
NO_OUT_PROJ = in_class(
    "MultiHeadAttention", "        self.out_proj = nn.Linear(dim_out, dim_out)\n", ""
).replace("return self.out_proj(context_vec)", "return context_vec")
ONE_HEAD_REPEATED = in_class(
    "MultiHeadAttentionWrapper",
    "[\n                CausalAttention(dim_in, dim_out, block_size, drop_rate, qkv_bias)\n"
    "                for _ in range(head_count)\n            ]",
    "[CausalAttention(dim_in, dim_out, block_size, drop_rate, qkv_bias)] * head_count",
)
OPTIONAL_ARGUMENTS = in_class(
    "CausalAttention", "def forward(self, x):", "def forward(self, x, mask=None, weights=False):"
)
EXITS = in_class(
    "SelfAttention_v2", "super().__init__()", "super().__init__()\n        raise SystemExit"
)
PLOTTING = RENAMED + "\n\n# %%\ndef plot_attention_scores(scores):\n    pass\n"
DROPOUT_ON_SCORES = in_class(
    "CausalAttention",
    "attn_scores = queries @ keys.transpose(1, 2)",
    "attn_scores = self.dropout(queries @ keys.transpose(1, 2))",
).replace("        attn_weights = self.dropout(attn_weights)\n", "", 1)
DROPOUT_IN_EVAL = in_class(
    "CausalAttention",
    "attn_weights = self.dropout(attn_weights)",
    "attn_weights = torch.nn.functional.dropout(attn_weights, self.dropout.p, training=True)",
)
HIDES_THE_PAST = in_class(  # hides what came before, shows the token itself and what follows
    "CausalAttention", "diagonal=1))", "diagonal=1).T)"
).replace(
    CAUSAL_MASK_LINE,
    "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens].tril(-1), -torch.inf)",
    1,
)
GLOBAL_MASK = in_class(
    "CausalAttention",
    CAUSAL_MASK_LINE,
    "attn_scores.masked_fill_(mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
).replace(
    "# %%\nclass CausalAttention",
    "# %%\nmask = torch.triu(torch.ones(6, 6), diagonal=1)\n\n\nclass CausalAttention",
    1,
)
SCALED_BY_TOKENS = in_class(
    "CausalAttention", "attn_scores / keys.shape[-1] ** 0.5", "attn_scores / num_tokens**0.5"
)
HEAD_DIM_FROM_D_IN = in_class(
    "MultiHeadAttention",
    "self.head_dim = dim_out // head_count",
    "self.head_dim = dim_in // head_count",
)
HEAD_DIM_FROM_D_IN_VIEW_MINUS_ONE = (
    in_class(  # runs: the heads take -1, the scale head_dim
        "MultiHeadAttention",
        "self.head_dim = dim_out // head_count",
        "self.head_dim = dim_in // head_count",
    )
    .replace("self.head_count, self.head_dim)", "self.head_count, -1)")
    .replace(  # in MultiHeadAttention only: the one whose weights go on to context_vec
        "keys.shape[-1] ** 0.5, dim=-1)\n        attn_weights = self.dropout(attn_weights)\n"
        "        context_vec",
        "self.head_dim**0.5, dim=-1)\n        attn_weights = self.dropout(attn_weights)\n"
        "        context_vec",
    )
)
CAUSAL_SOFTMAX_OVER_QUERIES = in_class("CausalAttention", "dim=-1)", "dim=-2)")
UNEXPLAINED = in_class(  # a difference that no known mistake explains
    "CausalAttention", "return attn_weights @ values", "return attn_weights @ values * 1.5"
)
UNUSED_BUFFER = in_class(
    "CausalAttention",
    """        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values""",
    "        p = self.dropout.p if self.training else 0.0\n"
    "        return F.scaled_dot_product_attention(\n"
    "            queries, keys, values, dropout_p=p, is_causal=True\n"
    "        )",
).replace("import torch\n", "import torch\nimport torch.nn.functional as F\n", 1)
MORE_MISTAKES = {
    # An MHA head of one column hides the scaling: the comparison runs at d_out = 4.
    "unscaled MultiHeadAttention": (UNSCALED_MHA, {"scale"}),
    "diagonal hidden, finite fill": (FINITE_FILL, {"diagonal"}),
    "no output projection at all": (NO_OUT_PROJ, {"out_proj"}),
    "one head repeated": (ONE_HEAD_REPEATED, {"heads"}),
    "optional forward arguments": (OPTIONAL_ARGUMENTS, set()),
    "sys.exit in a constructor": (EXITS, {"constructs"}),
    "a plotting helper": (PLOTTING, set()),
    "dropout on the scores, before the mask": (DROPOUT_ON_SCORES, {"dropout"}),
    "dropout in eval mode too": (DROPOUT_IN_EVAL, {"dropout"}),
    "a mask that hides the past": (HIDES_THE_PAST, {"matches_book", "causal"}),
    "a global 6x6 mask": (GLOBAL_MASK, {"runs", "mask_buffer"}),
    "scaled by the number of tokens": (SCALED_BY_TOKENS, {"scale"}),
    "head_dim from d_in": (HEAD_DIM_FROM_D_IN, {"runs"}),
    "head_dim from d_in, heads split with -1": (HEAD_DIM_FROM_D_IN_VIEW_MINUS_ONE, {"scale"}),
    # Normalised over the queries, each weight reads the later queries' scores.
    "a causal softmax over the queries": (CAUSAL_SOFTMAX_OVER_QUERIES, {"softmax_dim", "causal"}),
    "an unexplained difference": (UNEXPLAINED, {"matches_book"}),
    "a registered mask, unused (is_causal=True)": (UNUSED_BUFFER, set()),
}
CAUSES = {
    "a mask that hides the past": (
        "causal",
        "the mask hides the past and shows the future: "
        "changing token 6, the last, moves the output of token 1 by",
    ),
    "a global 6x6 mask": (
        "mask_buffer",
        "forward reads mask, a (6, 6) mask of the notebook, not the module's own",
    ),
    "scaled by the number of tokens": (
        "scale",
        "divided by the square root of the number of tokens",
    ),
    "head_dim from d_in": (
        "runs",
        "head_dim is computed from d_in (3 // 2 = 1), but the heads "
        "split the d_out columns of the queries, keys and values: head_dim = "
        "d_out // num_heads = 2",
    ),
    "head_dim from d_in, heads split with -1": (
        "scale",
        "with a head size of 2 (d_out=4, num_heads=2): head_dim is computed from d_in (3 // 2 = 1)",
    ),
    "a causal softmax over the queries": (
        "causal",
        "changing token 6, the last, moves the output of token 1 by",
    ),
    "a global 6x6 mask, at runs": (
        "runs",
        "forward reads mask, a (6, 6) mask of the notebook's, made for fewer tokens than "
        "these, instead of a mask the module registers itself",
    ),
    "dropout on the scores, before the mask": (
        "dropout",
        "dropout acts on the scores, before the softmax",
    ),
    "dropout in eval mode too": (
        "dropout",
        "in eval mode, with dropout=0.25, the output is not the output without dropout",
    ),
}


@pytest.mark.parametrize("case", MORE_MISTAKES)
def test_more_mistakes_are_named_by_the_right_check(case):
    source, expected = MORE_MISTAKES[case]
    report = check_source(source)
    assert set().union(*failures(report).values()) == expected
    assert "plot_attention_scores" not in [c["name"] for c in report["components"]]
    if case in CAUSES:
        check, expected_message = CAUSES[case]
        component = "MultiHeadAttention" if "head_dim" in case else "CausalAttention"
        assert expected_message in message(report, component, check)
    if f"{case}, at runs" in CAUSES:
        check, expected_message = CAUSES[f"{case}, at runs"]
        assert expected_message in message(report, "CausalAttention", check)


def test_an_unexplained_difference_still_gets_every_property_verdict():
    report = check_source(UNEXPLAINED)
    verdicts = {k["check"]: (k["status"], k["message"]) for c in report["components"]
                if c["name"] == "CausalAttention" for k in c["checks"]}  # fmt: skip
    assert verdicts["matches_book"][0] == "fail"
    assert verdicts["causal"] == (
        "pass",
        "no output depends on a later token: changing token 6, the last, left every other "
        "token's output as it was",
    )
    # 1.5 times every output: equal tokens still get equal outputs (the property cannot see
    # a uniform factor; matches_book does)
    assert verdicts["weights_sum"][0] == "pass"
    assert verdicts["diagonal"][0] == "pass"
    assert verdicts["mask_buffer"][0] == "pass"
    assert verdicts["dropout"][0] == "skip"
    assert "off in eval mode and active in training" in verdicts["dropout"][1]


def test_one_head_repeated_links_to_where_the_wrapper_builds_its_heads():
    text = message(check_source(ONE_HEAD_REPEATED), "MultiHeadAttentionWrapper", "heads")
    assert "the heads are one module repeated" in text
    assert text.endswith(
        "/05-multi-head-attention/#361-stacking-multiple-single-head-attention-layers)"
    )


def test_the_properties_are_probed_where_only_a_longer_context_fails():
    report = check_source(GLOBAL_MASK)
    verdicts = {k["check"]: k["status"] for c in report["components"]
                if c["name"] == "CausalAttention" for k in c["checks"]}  # fmt: skip
    assert verdicts["runs"] == "fail"  # at ten tokens
    assert verdicts["causal"] == verdicts["diagonal"] == verdicts["weights_sum"] == "pass"
    # Located where it runs: on the attention weights at every shape but the ten tokens.
    assert verdicts["dropout"] == verdicts["matches_book"] == "pass"
