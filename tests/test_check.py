"""attention-check on the learners' notebooks, on a correct one with renamed parameters, and
on one notebook per check that breaks exactly that check."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from attention_mechanisms.check.checks import CHECKS, SITE, link
from attention_mechanisms.check.cli import check_file, main
from attention_mechanisms.check.report import as_text

FIXTURES = Path(__file__).parent / "fixtures" / "check"
RENAMED = (FIXTURES / "renamed.py").read_text(encoding="utf-8")
SCHEMA = {
    "type": "object",
    "required": ["file", "cells", "components"],
    "additionalProperties": False,
    "properties": {
        "file": {"type": "string"},
        "unfinished": {"type": "string"},
        "cells": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["cell", "status"],
                "additionalProperties": False,
                "properties": {
                    "cell": {"type": "integer"},
                    "status": {"enum": ["ok", "error", "timeout", "skipped"]},
                    "error": {"type": "string"},
                },
            },
        },
        "components": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "role", "checks"],
                "properties": {
                    "name": {"type": "string"},
                    "role": {
                        "enum": [
                            "SelfAttention_v1",
                            "SelfAttention_v2",
                            "CausalAttention",
                            "MultiHeadAttentionWrapper",
                            "MultiHeadAttention",
                            "attention_function",
                            "softmax",
                            "context",
                            "scores",
                            None,
                        ]
                    },
                    "reason": {"type": "string"},
                    "checks": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["check", "status", "message"],
                            "additionalProperties": False,
                            "properties": {
                                "check": {"enum": list(CHECKS)},
                                "status": {"enum": ["pass", "fail", "skip"]},
                                "message": {"type": "string"},
                            },
                        },
                    },
                },
            },
        },
    },
}


def checked(path: Path, **limits) -> dict:
    report, _ = check_file(path, **limits)
    jsonschema.validate(report, SCHEMA)
    return report


def failures(report: dict) -> dict[str, set[str]]:
    """Component name -> the checks it fails."""
    return {
        c["name"]: {k["check"] for k in c["checks"] if k["status"] == "fail"}
        for c in report["components"]
    }


def message(report: dict, component: str, check: str) -> str:
    (entry,) = [c for c in report["components"] if c["name"] == component]
    return next(k["message"] for k in entry["checks"] if k["check"] == check)


# --------------------------------------------------------------------------- the seeds


@pytest.mark.parametrize(
    ("fixture", "roles"),
    [
        (
            "id-chapter-3-full.ipynb",
            ["softmax", "SelfAttention_v1", "SelfAttention_v2", "CausalAttention",
             "MultiHeadAttentionWrapper", "MultiHeadAttention"],
        ),
        ("vi-simplified-self-attention.ipynb", ["softmax"]),
        ("vi-self-attention-v1-v2.ipynb", ["SelfAttention_v1", "SelfAttention_v2"]),
    ],
)  # fmt: skip
def test_the_learners_correct_notebooks_pass(fixture, roles):
    report = checked(FIXTURES / fixture)
    assert [c["role"] for c in report["components"]] == roles
    assert all(not failed for failed in failures(report).values())
    assert all(cell["status"] == "ok" for cell in report["cells"])


def test_the_vi_multihead_notebook_names_its_trailing_comma():
    report = checked(FIXTURES / "vi-multihead-attention.ipynb")
    assert failures(report) == {
        "CausalAttention": set(),
        "MultiHeadAttentionWrapper": set(),
        "MultiHeadAttention": {"runs"},
    }
    text = message(report, "MultiHeadAttention", "runs")
    assert text.startswith(
        "self.dim_out is the tuple (2,): the trailing comma in 'self.dim_out = dim_out,' "
        "(cell 5, line 5), so it raised TypeError: view(): argument 'size'"
    )
    assert text.endswith(f"(see {link('trailing_comma')})")


def test_the_zh_notebook_names_shape_call_and_reports_its_mask_convention():
    report = checked(FIXTURES / "zh-multihead-attention-buggy.ipynb")
    assert failures(report) == {"_attention": {"runs"}, "MultiHeadAttention": {"runs"}}
    assert [c["role"] for c in report["components"]] == ["attention_function", "MultiHeadAttention"]
    for component in ("_attention", "MultiHeadAttention"):
        assert message(report, component, "runs") == (
            "torch.Size is not callable: shape(-1) should be shape[-1] "
            f"(cell 4, line 8: 'd_k = query.shape(-1)') (see {link('shape_call')})"
        )
        convention = message(report, component, "causal")
        assert (
            "mask keeps the lower triangle (a keep mask), so masked_fill must hide where it is 0"
            in convention
        )
    assert report["cells"][5] == {
        "cell": 6, "status": "error",
        "error": "TypeError: 'torch.Size' object is not callable (cell 4, line 8)",
    }  # fmt: skip


# --------------------------------------------------------------------------- one check each


def test_the_renamed_but_correct_notebook_passes_everything():
    report = checked(FIXTURES / "renamed.py")
    assert [c["role"] for c in report["components"]] == [
        "SelfAttention_v1", "SelfAttention_v2", "CausalAttention",
        "MultiHeadAttentionWrapper", "MultiHeadAttention", "softmax",
    ]  # fmt: skip
    statuses = {k["status"] for c in report["components"] for k in c["checks"]}
    assert statuses == {"pass", "skip"}
    skipped = [
        (c["name"], k["check"], k["message"])
        for c in report["components"]
        for k in c["checks"]
        if k["status"] == "skip" and not k["message"].startswith("does not apply")
    ]
    assert skipped == []


def in_class(name: str, old: str, new: str, count: int = 1) -> str:
    """The renamed notebook with ``old`` replaced in class ``name`` only."""
    cells = RENAMED.split("# %%\n")
    (index,) = [i for i, cell in enumerate(cells) if f"class {name}(" in cell]
    assert cells[index].count(old) == count, (name, old)
    cells[index] = cells[index].replace(old, new)
    return "# %%\n".join(cells)


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


def test_every_check_has_a_notebook_that_breaks_it():
    assert set(BROKEN) == set(CHECKS)


@pytest.mark.parametrize("check", CHECKS)
def test_a_notebook_that_breaks_one_check_fails_that_check_alone(tmp_path, check):
    path = tmp_path / f"broken_{check}.py"
    path.write_text(BROKEN[check], encoding="utf-8")
    report = checked(path)
    failed = set().union(*failures(report).values())
    assert failed == {check}
    for component in report["components"]:
        for result in component["checks"]:
            if result["status"] == "fail":
                assert "(see https://" in result["message"] or check in (
                    "shape",
                    "constructs",
                    "runs",
                )


def test_the_messages_name_the_cause(tmp_path):
    cases = {
        "scale": "the scores are not scaled: divide them by keys.shape[-1] ** 0.5",
        "softmax_dim": "the softmax normalises over the queries (dim=-2 or 0): use dim=-1",
        "causal": "later tokens are not hidden",
        "diagonal": "the mask hides each token from itself too: triu needs diagonal=1",
        "mask_buffer": "CausalAttention: self.mask is a plain attribute; register it",
        "out_proj": "the output projection is never applied",
        "heads": "each head takes every num_heads-th column",
    }
    for check, expected in cases.items():
        path = tmp_path / f"broken_{check}.py"
        path.write_text(BROKEN[check], encoding="utf-8")
        report = checked(path)
        texts = [
            k["message"] for c in report["components"] for k in c["checks"] if k["status"] == "fail"
        ]
        assert any(expected in text for text in texts), (check, texts)


# --------------------------------------------------------------------------- hard cases


def test_an_endless_loop_is_stopped_within_the_time_limit(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text("# %%\nwhile True:\n    pass\n\n" + RENAMED, encoding="utf-8")
    report = checked(path, cell_timeout=2, total_timeout=60)
    assert report["cells"][0] == {
        "cell": 1,
        "status": "timeout",
        "error": "still running after 2 s",
    }
    assert all(not failed for failed in failures(report).values())  # the rest still checked


def test_a_cell_that_reads_input_is_reported(tmp_path):
    path = tmp_path / "asks.py"
    path.write_text("# %%\nname = input('your name? ')\n\n" + RENAMED, encoding="utf-8")
    cell = checked(path)["cells"][0]
    assert cell["status"] == "error" and cell["error"].startswith("EOFError")


def test_a_notebook_without_attention_code(tmp_path, capsys):
    path = tmp_path / "notes.py"
    path.write_text("# %%\nprint(sum(range(10)))\n", encoding="utf-8")
    assert main([str(path)]) == 0
    assert "no chapter-3 component found" in capsys.readouterr().out


# --------------------------------------------------------------------------- the command


def test_exit_status_and_json(tmp_path, capsys):
    assert main(["--json", str(FIXTURES / "renamed.py")]) == 0
    jsonschema.validate(json.loads(capsys.readouterr().out), SCHEMA)
    assert main([str(FIXTURES / "zh-multihead-attention-buggy.ipynb")]) == 1
    capsys.readouterr()
    unreadable = tmp_path / "notes.txt"
    unreadable.write_text("hello")
    assert main([str(unreadable)]) == 2
    assert "expected a .ipynb notebook or a .py file; got notes.txt" in capsys.readouterr().err


def test_the_human_report_without_colour(capsys):
    main([str(FIXTURES / "vi-multihead-attention.ipynb")])
    out = capsys.readouterr().out
    assert "\033[" not in out  # not a terminal: no colour codes
    assert re.search(r"^  FAIL  runs +self\.dim_out is the tuple \(2,\)", out, re.M)
    assert re.search(r"^  pass  matches_book +equal to the book's CausalAttention", out, re.M)


def test_the_module_runs_as_a_command():
    result = subprocess.run(
        [sys.executable, "-m", "attention_mechanisms.check", str(FIXTURES / "renamed.py")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "MultiHeadAttention" in result.stdout


def test_the_links_point_at_the_site_that_mkdocs_builds():
    site_url = re.search(
        r"^site_url:\s*(\S+)", (Path(__file__).parents[1] / "mkdocs.yml").read_text(), re.M
    )
    assert site_url.group(1) == SITE


def test_an_attention_function_may_take_either_mask_convention(tmp_path):
    path = tmp_path / "functions.py"
    path.write_text(
        "# %%\nimport torch\n\n\n"
        "def attention(query, key, value, mask=None):\n"
        "    scores = query @ key.transpose(-2, -1) / query.shape[-1] ** 0.5\n"
        "    if mask is not None:\n"
        "        scores = scores.masked_fill(mask == 0, float('-inf'))\n"
        "    return torch.softmax(scores, dim=-1) @ value\n\n\n"
        "def attend(q, k, v, hide=None):\n"
        "    scores = q @ k.mT / k.shape[-1] ** 0.5\n"
        "    if hide is not None:\n"
        "        scores = scores.masked_fill(hide, -torch.inf)\n"
        "    return torch.softmax(scores, dim=-1) @ v\n\n\n"
        "mask = torch.tril(torch.ones(6, 6))\n",
        encoding="utf-8",
    )
    report = checked(path)
    assert failures(report) == {"attention": set(), "attend": set()}
    assert message(report, "attention", "causal").startswith("mask keeps the lower triangle")
    assert message(report, "attend", "causal") == "a hide mask hides the future"


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
MORE_MISTAKES = {
    # An MHA head of one column hides the scaling: the comparison runs at d_out = 4.
    "unscaled MultiHeadAttention": (UNSCALED_MHA, {"scale"}),
    "diagonal hidden, finite fill": (FINITE_FILL, {"diagonal"}),
    "no output projection at all": (NO_OUT_PROJ, {"out_proj"}),
    "one head repeated": (ONE_HEAD_REPEATED, {"heads"}),
    "optional forward arguments": (OPTIONAL_ARGUMENTS, set()),
    "sys.exit in a constructor": (EXITS, {"constructs"}),
    "a plotting helper": (PLOTTING, set()),
}


@pytest.mark.parametrize("case", MORE_MISTAKES)
def test_more_mistakes_are_named_by_the_right_check(tmp_path, case):
    source, expected = MORE_MISTAKES[case]
    path = tmp_path / "learner.py"
    path.write_text(source, encoding="utf-8")
    report = checked(path)
    assert set().union(*failures(report).values()) == expected
    assert "plot_attention_scores" not in [c["name"] for c in report["components"]]


def test_a_forward_that_never_ends_fails_runs_within_the_limit(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text(
        in_class("SelfAttention_v2", "keys = self.key(x)", "while True:\n            pass"),
        encoding="utf-8",
    )
    report = checked(path, cell_timeout=2, total_timeout=60)
    assert failures(report)["SelfAttention_v2"] == {"runs"}
    assert "still running after its time limit" in message(report, "SelfAttention_v2", "runs")


def test_a_notebook_whose_cells_all_fail_is_not_a_pass(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text(
        "# %%\nimport torch\nclass Broken(torch.nn.Module:\n    pass\n", encoding="utf-8"
    )
    assert main([str(path)]) == 1
    # The line of the file, as every other message gives: the class statement is line 3.
    assert "cell 1: error: SyntaxError: " in (out := capsys.readouterr().out)
    assert "(line 3)" in out


def test_plots_and_unplaceable_classes_do_not_stop_the_check(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text(
        "# %%\nimport matplotlib.pyplot as plt\nfrom torch import nn\n\n"
        "plt.plot([1, 2, 3])\nplt.show()\n\n\n"
        "class Tokenizer(nn.Module):\n    def __init__(self, vocabulary):\n"
        "        super().__init__()\n\n\n" + RENAMED,
        encoding="utf-8",
    )
    report = checked(path)
    assert report["cells"][0] == {"cell": 1, "status": "ok"}
    (tokenizer,) = [c for c in report["components"] if c["name"] == "Tokenizer"]
    assert tokenizer["role"] is None and tokenizer["checks"] == []
    assert tokenizer["reason"] == (
        "its name and its constructor Tokenizer(vocabulary) match none of the book's classes"
    )
    assert all(not failed for failed in failures(report).values())


def test_the_marks_are_coloured_only_when_asked():
    report = {
        "file": "f.py",
        "cells": [],
        "components": [
            {
                "name": "X",
                "role": "softmax",
                "checks": [{"check": "runs", "status": "fail", "message": "m"}],
            }
        ],
    }
    assert "\033[31mFAIL\033[0m" in as_text(report, [], colour=True)
    assert "\033[" not in as_text(report, [], colour=False)
