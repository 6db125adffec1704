"""attention-check on every notebook of tests/fixtures/check, as a teacher would run it:
``attention-check --json tests/fixtures/check/``.

- ``forms/``: correct classes written every way the book's can be written; no check fails.
- ``mistakes/``: one mistake learners really make each; that one check fails, naming it.
- the learners' own notebooks (``*.ipynb`` beside them) and ``renamed.py``.

The command runs here with each notebook's worker in this process (`checking.in_this_process`):
a new worker process costs more than a second of start-up (one forked from the command's fork
server, much less), its checks a tenth of a second. The test
marked ``slow`` runs the installed command over the folder, each notebook in its own process,
and must find the very same reports.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from checking import check_source, failures, in_this_process, message, needs_alarm

from attention_mechanisms.check.checks import CHECKS
from attention_mechanisms.check.cli import check_file, main
from attention_mechanisms.check.messages import LANGUAGES, link
from attention_mechanisms.check.report import as_summary, as_text, exit_status

RENAMED = (Path(__file__).parent / "fixtures" / "check" / "renamed.py").read_text(encoding="utf-8")


def checked(path: Path, **limits) -> dict:
    """``path``'s report, checked in this process (`checking.in_this_process`)."""
    with in_this_process():
        report, _ = check_file(path, **limits)
    jsonschema.validate(report, SCHEMA)
    return report


def in_class(name: str, old: str, new: str) -> str:
    """The renamed notebook with ``old`` replaced in class ``name`` only."""
    cells = RENAMED.split("# %%\n")
    (index,) = [i for i, cell in enumerate(cells) if f"class {name}(" in cell]
    cells[index] = cells[index].replace(old, new)
    return "# %%\n".join(cells)


FIXTURES = Path(__file__).parent / "fixtures" / "check"
ENGLISH = {**os.environ, "LANGUAGE": "en"}
FORMS = sorted(p.name for p in (FIXTURES / "forms").iterdir())
ROLES = [
    "SelfAttention_v1", "SelfAttention_v2", "CausalAttention", "MultiHeadAttentionWrapper",
    "MultiHeadAttention", "attention_function", "softmax", "context", "scores",
    "GroupedQueryAttention", "MultiHeadAttentionWithSWA", "MultiHeadLatentAttention",
    "GatedDeltaNet", "compute_rope_params", "apply_rope", None,
]  # fmt: skip
CHECK = {
    "type": "object",
    "required": ["check", "status", "message"],
    "additionalProperties": False,
    "properties": {
        "check": {"enum": list(CHECKS)},
        "status": {"enum": ["pass", "fail", "skip"]},
        "message": {"type": "string", "minLength": 1},
    },
}
COMPONENT = {
    "type": "object",
    "required": ["name", "role", "checks"],
    "properties": {
        "name": {"type": "string"},
        "role": {"enum": ROLES},
        "reason": {"type": "string"},
        "checks": {"type": "array", "items": CHECK},
    },
}
CELL = {
    "type": "object",
    "required": ["cell", "status"],
    "additionalProperties": False,
    "properties": {
        "cell": {"type": "integer"},
        "status": {"enum": ["ok", "error", "timeout", "skipped", "memory"]},
        "error": {"type": "string"},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["file", "cells", "components"],
    "additionalProperties": False,
    "properties": {
        "file": {"type": "string"},
        "unfinished": {"type": "string"},
        "cells": {"type": "array", "items": CELL},
        "components": {"type": "array", "items": COMPONENT},
    },
}


def by_name(printed: str) -> dict[str, dict]:
    """The reports that ``--json`` printed, valid, in their order, by path in FIXTURES."""
    out = json.loads(printed)
    for report in out:
        jsonschema.validate(report, SCHEMA)
    return {Path(report["file"]).relative_to(FIXTURES).as_posix(): report for report in out}


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    """Every fixture's report, from one run of the command over the folder (in this process:
    `test_the_installed_command_gives_the_same_reports` runs the real one)."""
    printed = io.StringIO()
    with in_this_process(), contextlib.redirect_stdout(printed):
        status = main(["--json", "--lang", "en", str(FIXTURES)])
    assert status == 1  # the mistakes fail
    return by_name(printed.getvalue())


@pytest.mark.slow
def test_the_installed_command_gives_the_same_reports(reports):
    """The installed command, each notebook in its own process (two side by side on two
    cores, forked from one that imported torch), as a teacher runs it: the reports every
    other test reads."""
    command = shutil.which("attention-check", path=Path(sys.executable).parent)
    assert command, f"attention-check is not installed beside {sys.executable}"
    result = subprocess.run(
        [command, "--json", str(FIXTURES)], capture_output=True, text=True, env=ENGLISH
    )
    assert result.returncode == 1, result.stderr  # the mistakes fail
    printed = by_name(result.stdout)
    assert list(printed) == list(reports)  # every notebook, in name order
    for name, report in reports.items():
        assert printed[name] == report, name


@pytest.mark.parametrize("name", FORMS)
def test_every_correct_form_passes(reports, name):
    report = reports[f"forms/{name}"]
    assert all(cell["status"] == "ok" for cell in report["cells"])
    assert report["components"], name
    for component in report["components"]:
        statuses = {k["check"]: k["status"] for k in component["checks"]}
        assert "fail" not in statuses.values(), (name, component)
        assert statuses["matches_book"] == "pass", (name, component)


# mistake file -> (component, the one check that fails, what its message must say, topic)
MISTAKES = {
    "sdpa_hide_mask_as_attn_mask.py": (
        "MultiHeadAttention", "causal",
        "given to scaled_dot_product_attention as attn_mask, where True means attend", "sdpa_mask",
    ),
    "heads_cat_without_dim.ipynb": (
        "MultiHeadAttentionWrapper", "shape", "joined along the batch dimension; torch.cat needs "
        "dim=-1", "cat_dim",
    ),
    "view_without_contiguous.py": (
        "MultiHeadAttention", "runs", "works with the book's shapes; with a head size of 2 "
        "(d_out=4, num_heads=2): view after transpose needs .contiguous()", "contiguous",
    ),
    "heads_view_without_transpose.py": (
        "MultiHeadAttention", "heads", "split with view(b, num_heads, num_tokens, head_dim)",
        "heads_transpose",
    ),
    "scale_after_softmax.py": (
        "CausalAttention", "scale", "divided by the square root of d_k after the softmax",
        "scale_after_softmax",
    ),
    "dropout_before_softmax.py": (
        "CausalAttention", "dropout", "dropout acts on the scores", "dropout_before_softmax",
    ),
    "dropout_scaled_by_inverse_p.py": (
        "CausalAttention", "dropout", "scaled by 1/p, not by 1/(1-p)", "dropout_scale",
    ),
    "d_out_per_head_in_multihead.py": (
        "MultiHeadAttention", "shape", "in MultiHeadAttention d_out is the total", "d_out_meaning",
    ),
    "d_out_total_in_wrapper.py": (
        "MultiHeadAttentionWrapper", "shape", "in the wrapper d_out is the size of each head",
        "d_out_meaning",
    ),
    "mask_not_sliced.py": (
        "CausalAttention", "runs", "works with the book's shapes; with 4 tokens and "
        "context_length=6: the mask is not cut to the number of tokens: use "
        "self.mask[:num_tokens, :num_tokens]", "mask_not_sliced",
    ),
    "weights_transposed.py": (
        "SelfAttention_v1", "runs", "a weight stored as (d_out, d_in) is multiplied as x @ W",
        "weight_layout",
    ),
    "keep_mask_used_as_hide_mask.py": (
        "CausalAttention", "causal", "the mask marks what to keep (tril) but masked_fill hides "
        "where it is True", "diagonal",
    ),
    "unscaled_scores.py": (
        "MultiHeadAttention", "scale", "with a head size of 2 (d_out=4, num_heads=2): "
        "MultiHeadAttention: the scores are not scaled", "scale",
    ),
    "heads_in_plain_list.py": (
        "MultiHeadAttentionWrapper", "matches_book", "its heads are in a plain list, self.heads",
        "heads",
    ),
    "mha_scale_sqrt_d_out.py": (
        "MultiHeadAttention", "scale", "divided by the square root of d_out, not of the head "
        "dimension", "scale",
    ),
    "mha_join_without_transpose.py": (
        "MultiHeadAttention", "heads", "joined with view(b, num_tokens, d_out) straight from",
        "heads_transpose",
    ),
    "causal_mask_rows_only.py": (
        "CausalAttention", "runs", "the mask is not cut to the number of tokens", "mask_not_sliced",
    ),
    "causal_dropout_on_context.py": (
        "CausalAttention", "dropout", "dropout acts on the output, not on the attention weights",
        "dropout",
    ),
    "causal_scale_by_d_in.py": (
        "CausalAttention", "scale", "divided by the square root of d_in", "scale",
    ),
    "causal_fdropout_always_on.py": (
        "CausalAttention", "dropout", "in eval mode, with dropout=0.25, the output is not the "
        "output without dropout", "dropout",
    ),
    "wrapper_cat_dim1.py": (
        "MultiHeadAttentionWrapper", "shape", "joined along the tokens; torch.cat needs dim=-1",
        "cat_dim",
    ),
    "causal_softmax_dim1_batched.py": (
        "CausalAttention", "softmax_dim", "the softmax normalises over the queries", "softmax_dim",
    ),
    "mha_out_proj_unused.py": (
        "MultiHeadAttention", "out_proj", "the output projection is never applied", "out_proj",
    ),
    "mha_view_with_context_length.py": (
        "MultiHeadAttention", "runs", "works with the book's shapes; with 4 tokens and "
        "context_length=6: RuntimeError: shape '[2, 6, 2, 1]' is invalid", None,
    ),
    "causal_masked_fill_not_assigned.py": (
        "CausalAttention", "causal", "masked_fill returns a new tensor, and its result is not kept",
        "causal",
    ),
    "causal_global_mask.py": (
        "CausalAttention", "mask_buffer", "forward reads mask_simple, a (6, 6) mask of the "
        "notebook, not the module's own", "global_mask",
    ),
    "causal_mask_hides_past.py": (
        "CausalAttention", "causal", "the mask hides the past and shows the future", "diagonal",
    ),
    "mha_head_dim_from_d_in.py": (
        "MultiHeadAttention", "runs", "head_dim is computed from d_in (3 // 2 = 1)",
        "head_dim_d_in",
    ),
    "causal_mask_after_softmax.py": (
        "CausalAttention", "weights_sum", "multiplied by the mask after the softmax",
        "weights_sum",
    ),
    "causal_scale_by_num_tokens.py": (
        "CausalAttention", "scale", "divided by the square root of the number of tokens",
        "scale_tokens",
    ),
    "softmax_over_queries.py": (
        "SelfAttention_v2", "softmax_dim", "the softmax normalises over the queries", "softmax_dim",
    ),
    # Found from behaviour, not from a list: each kind of mistake in two forms.
    "causal_queries_keys_swapped.py": (
        "CausalAttention", "matches_book", "the scores are keys @ queries.T: queries and keys are "
        "swapped; the output equals the book's only with W_query and W_key exchanged",
        "CausalAttention",
    ),
    "mha_queries_keys_swapped.py": (
        "MultiHeadAttention", "matches_book", "the scores are keys @ queries.T: queries and keys "
        "are swapped", "MultiHeadAttention",
    ),
    "causal_values_from_key.py": (
        "CausalAttention", "matches_book", "the values equal the keys: values = W_key(x)? "
        "(W_value is never used)", "CausalAttention",
    ),
    "mha_values_from_key.py": (
        "MultiHeadAttention", "matches_book", "the values equal the keys: values = W_key(x)? "
        "(W_value is never used)", "MultiHeadAttention",
    ),
    "causal_queries_from_key.py": (
        "CausalAttention", "matches_book", "the queries equal the keys: queries = W_key(x)? "
        "(W_query is never used)", "CausalAttention",
    ),
    "causal_scale_half_d_k.py": (
        "CausalAttention", "scale", "the scores are divided by 4, where the book divides by the "
        "square root of the key dimension, 1.414: d_k ** 1/2 is (d_k ** 1) / 2", "scale",
    ),
    "mha_scale_half_d_k.py": (
        "MultiHeadAttention", "scale", "the scores are divided by 2, where the book divides by the "
        "square root of the key dimension, 1: d_k ** 1/2 is (d_k ** 1) / 2", "scale",
    ),
    "mha_dropout_on_context.py": (
        "MultiHeadAttention", "dropout", "dropout acts on the context vectors, before the output "
        "projection", "dropout",
    ),
    "causal_dropout_on_values.py": (
        "CausalAttention", "dropout", "dropout acts on the values, not on the attention weights",
        "dropout",
    ),
    "wrapper_heads_split_own_head.py": (
        "MultiHeadAttentionWrapper", "shape", "in the wrapper d_out is the size of each head, so 2 "
        "heads give 2 * d_out columns", "d_out_meaning",
    ),
}  # fmt: skip


# What else the mistake breaks, as the checks that need no reference see it (they run on
# every class that runs, whatever the other checks say).
ALSO = {
    "heads_in_plain_list.py": {"dropout"},  # .train() does not reach heads in a plain list
    "mha_join_without_transpose.py": {"causal"},  # the join mixes later tokens into earlier rows
    "causal_softmax_dim1_batched.py": {"causal"},  # a softmax over the queries reads later ones
    "causal_global_mask.py": {"runs"},  # at ten tokens
    "causal_mask_hides_past.py": {"matches_book"},  # no known mistake gives its output
    "causal_mask_after_softmax.py": {"causal"},  # the softmax's denominator saw the future
}


def test_every_mistake_has_a_case():
    assert set(MISTAKES) == {p.name for p in (FIXTURES / "mistakes").iterdir()}


@pytest.mark.parametrize("buffer", ["mask", "hide"])
def test_more_tokens_than_the_notebooks_mask_name_that_mask(buffer):
    """Whatever the module's own mask is called, the message names the notebook's."""
    source = (FIXTURES / "mistakes" / "causal_global_mask.py").read_text(encoding="utf-8")
    source = source.replace('register_buffer("mask"', f'register_buffer("{buffer}"')
    text = message(check_source(source, "en"), "CausalAttention", "runs")
    assert "forward reads mask_simple, a (6, 6) mask of the notebook's" in text, text
    assert "self.mask" not in text


def test_a_class_that_fails_at_one_size_is_still_compared_where_it_runs(reports):
    report = reports["mistakes/view_without_contiguous.py"]
    for check in ("shape", "matches_book"):
        text = message(report, "MultiHeadAttention", check)
        assert text.endswith("(at the 5 of 7 shapes where it runs)"), text


@pytest.mark.parametrize("name", MISTAKES)
def test_each_mistake_fails_its_one_check_and_names_the_cause(reports, name):
    component, check, fragment, topic = MISTAKES[name]
    report = reports[f"mistakes/{name}"]
    expected = {component: {check} | ALSO.get(name, set())}
    assert {c: f for c, f in failures(report).items() if f} == expected
    text = message(report, component, check)
    assert fragment in text, text
    assert text.endswith(f"(see {link(topic, 'en')})") if topic else "(see " not in text


# --------------------------------------------------------------------------- the learners


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
        ("renamed.py", ["SelfAttention_v1", "SelfAttention_v2", "CausalAttention",
                        "MultiHeadAttentionWrapper", "MultiHeadAttention", "softmax"]),
    ],
)  # fmt: skip
def test_the_correct_notebooks_pass(reports, fixture, roles):
    report = reports[fixture]
    assert [c["role"] for c in report["components"]] == roles
    assert all(not failed for failed in failures(report).values())
    assert all(cell["status"] == "ok" for cell in report["cells"])


def test_the_vi_multihead_notebook_names_its_trailing_comma(reports):
    report = reports["vi-multihead-attention.ipynb"]
    assert failures(report) == {
        "CausalAttention": set(),
        "MultiHeadAttentionWrapper": set(),
        "MultiHeadAttention": {"runs"},
    }
    text = message(report, "MultiHeadAttention", "runs")
    assert text.startswith(
        "self.dim_out is the tuple (2,): the trailing comma in 'self.dim_out = dim_out,' "
        "(cell 6, line 5), so it raised TypeError: view(): argument 'size'"
    )
    assert text.endswith(f"(see {link('trailing_comma', 'en')})")


def test_the_zh_notebook_names_shape_call(reports):
    report = reports["zh-multihead-attention-buggy.ipynb"]
    assert failures(report) == {"_attention": {"runs"}, "MultiHeadAttention": {"runs"}}
    assert [c["role"] for c in report["components"]] == ["attention_function", "MultiHeadAttention"]
    for component in ("_attention", "MultiHeadAttention"):
        text = message(report, component, "runs")
        assert text.startswith("torch.Size is not callable: shape(-1) should be shape[-1]")
        assert "(cell 4, line 8: 'd_k = query.shape(-1)')" in text
    assert report["cells"][5] == {
        "cell": 6, "status": "error",
        "error": "TypeError: 'torch.Size' object is not callable (cell 4, line 8)",
    }  # fmt: skip


def test_the_zh_notebook_once_fixed_passes_and_needs_no_mask_buffer(tmp_path):
    source = (FIXTURES / "zh-multihead-attention-buggy.ipynb").read_text(encoding="utf-8")
    fixed = tmp_path / "fixed.ipynb"
    fixed.write_text(source.replace("query.shape(-1)", "query.shape[-1]"), encoding="utf-8")
    with in_this_process():
        assert main(["--json", str(fixed)]) == 0


# --------------------------------------------------------------------------- the summary


def test_the_summary_has_one_row_per_notebook(reports):
    notebooks = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".py", ".ipynb"))
    assert len(reports) == len(notebooks)
    rows = list(csv.DictReader(io.StringIO(as_summary(list(reports.values()), "csv"))))
    assert [row["file"] for row in rows] == [str(path) for path in notebooks]
    by_file = {Path(row["file"]).relative_to(FIXTURES).as_posix(): row for row in rows}
    assert by_file["mistakes/mask_not_sliced.py"] == {
        "file": str(FIXTURES / "mistakes" / "mask_not_sliced.py"),
        "components": "CausalAttention",
        "failed": "CausalAttention.runs",
        "cells": "",
    }
    assert by_file["zh-multihead-attention-buggy.ipynb"]["cells"] == "6"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_markdown_summary_in_each_language(reports, language):
    table = as_summary(list(reports.values()), "md", language).splitlines()
    assert table[1] == "|---|---|---|---|"
    assert len(table) == 2 + len(reports)
    assert {row.count(" | ") for row in table[:1] + table[2:]} == {3}  # four columns a row


def test_summary_alone_from_the_command(reports, capsys):
    total = r"1 notebooks in \d+\.\d s: 1 without failures, 0 with failures\n"
    with in_this_process():
        assert main(["--summary", "md", str(FIXTURES / "renamed.py")]) == 0
        out = capsys.readouterr()
        assert main(["--summary", "csv", str(FIXTURES / "renamed.py")]) == 0
        csv_out = capsys.readouterr()
    assert out.out.splitlines()[2].startswith(f"| {FIXTURES / 'renamed.py'} | SelfAttention_v1, ")
    assert re.fullmatch(total, out.err)
    assert csv_out.out == as_summary([reports["renamed.py"]], "csv") + "\n"
    assert re.fullmatch(total, csv_out.err)


# --------------------------------------------------------------------------- hard cases


@needs_alarm
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
    with in_this_process():
        assert main([str(path)]) == 0
    assert "no chapter-3 component found" in capsys.readouterr().out


# --------------------------------------------------------------------------- the command


def test_exit_status(reports, tmp_path, capsys):
    assert exit_status([reports["renamed.py"], reports["forms/causal_einsum.py"]]) == 0
    assert exit_status([reports["renamed.py"], reports["zh-multihead-attention-buggy.ipynb"]]) == 1
    unreadable = tmp_path / "notes.txt"
    unreadable.write_text("hello")
    assert main([str(unreadable)]) == 2
    assert "expected a .ipynb notebook or a .py file; got notes.txt" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.ipynb")]) == 2


def test_the_human_report_without_colour(reports):
    report = reports["vi-multihead-attention.ipynb"]
    out = as_text(report, report["cells"])
    assert "\033[" not in out
    assert re.search(r"^  FAIL  runs +self\.dim_out is the tuple \(2,\)", out, re.M)
    assert re.search(r"^  pass  matches_book +equal to the book's CausalAttention", out, re.M)
    assert not re.search(r"^  cell \d+:", out, re.M)  # every cell ran: the class fails when called
    assert "does not apply" not in out


@needs_alarm
def test_a_forward_that_never_ends_fails_runs_within_the_limit(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text(
        in_class("SelfAttention_v2", "keys = self.key(x)", "while True:\n            pass"),
        encoding="utf-8",
    )
    report = checked(path, cell_timeout=2, total_timeout=60)
    assert failures(report)["SelfAttention_v2"] == {"runs"}
    assert "still running after its time limit" in message(report, "SelfAttention_v2", "runs")


@needs_alarm
def test_a_constructor_that_never_ends_fails_constructs_within_the_limit(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text(
        in_class("SelfAttention_v2", "super().__init__()", "while True:\n            pass"),
        encoding="utf-8",
    )
    report = checked(path, cell_timeout=2, total_timeout=60)
    assert failures(report)["SelfAttention_v2"] == {"constructs"}
    text = message(report, "SelfAttention_v2", "constructs")
    assert (
        text == "the constructor is still running after its time limit: does __init__ loop forever?"
    )


def test_a_notebook_whose_cells_all_fail_is_not_a_pass(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text(
        "# %%\nimport torch\nclass Broken(torch.nn.Module:\n    pass\n", encoding="utf-8"
    )
    with in_this_process():
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
