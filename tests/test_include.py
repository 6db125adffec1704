"""book.include: a class of the package as a chapter shows it, computing what the package's does."""

from __future__ import annotations

import ast
import textwrap

import pytest
import torch
from checkouts import make_checkout
from torch import nn

import attention_mechanisms as am
from attention_mechanisms import checks
from book import BookError, include
from book.build import TOOLING, Build

PACKAGE = Build(TOOLING).package  # the book's own package: src/attention_mechanisms

SHOWN = [
    "attention_mechanisms.self_attention.SelfAttention_v1",
    "attention_mechanisms.self_attention.SelfAttention_v2",
    "attention_mechanisms.causal.CausalAttention",
    "attention_mechanisms.multihead.MultiHeadAttentionWrapper",
    "attention_mechanisms.multihead.MultiHeadAttention",
]


@pytest.mark.parametrize("qualified", SHOWN)
def test_the_shown_class_has_no_docstring_annotation_or_lint_comment(qualified):
    shown = include.book_source(qualified, PACKAGE)
    tree = ast.parse(shown)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            assert ast.get_docstring(node, clean=False) is None
        if isinstance(node, ast.arg):
            assert node.annotation is None, node.arg
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None
        assert not isinstance(node, ast.AnnAssign)
    assert "noqa" not in shown and "type: ignore" not in shown
    assert "\n\n\n" not in shown and all(len(line) <= include.WIDTH for line in shown.splitlines())
    assert shown.splitlines()[1].startswith("    def __init__(self, d_in, d_out")  # no blank line


def _defined(qualified: str) -> type:
    namespace = {"torch": torch, "nn": nn, "CausalAttention": am.CausalAttention}
    namespace.update(
        {name: getattr(checks, name) for name in dir(checks) if name.startswith("check")}
    )
    exec(include.book_source(qualified, PACKAGE), namespace)
    return namespace[qualified.rpartition(".")[2]]


ARGUMENTS = {
    "SelfAttention_v1": (3, 2),
    "SelfAttention_v2": (3, 2),
    "CausalAttention": (3, 2, 6, 0.5),
    "MultiHeadAttentionWrapper": (3, 2, 6, 0.5, 2),
    "MultiHeadAttention": (3, 4, 6, 0.5, 2),
}


@pytest.mark.parametrize("qualified", SHOWN)
def test_the_shown_class_computes_the_packages_bits_dropout_and_gradients_included(qualified):
    name = qualified.rpartition(".")[2]
    shown, packaged = _defined(qualified), getattr(am, name)
    results = []
    for cls in (shown, packaged):
        torch.manual_seed(123)
        module = cls(*ARGUMENTS[name])
        x = torch.rand(2, 6, 3, requires_grad=True)
        out = module(x)  # training mode: dropout draws from the same generator
        out.sum().backward()
        results.append((module.state_dict(), out, x.grad))
    (state, out, grad), (state_p, out_p, grad_p) = results
    assert state.keys() == state_p.keys()
    assert all(torch.equal(state[k], state_p[k]) for k in state)
    assert torch.equal(out, out_p) and torch.equal(grad, grad_p)


def test_the_shown_class_keeps_the_input_checks():
    cls = _defined("attention_mechanisms.multihead.MultiHeadAttention")
    with pytest.raises(ValueError, match="d_out must be divisible by num_heads"):
        cls(3, 5, 6, 0.0, 2)


def test_a_long_signature_gets_one_argument_a_line(tmp_path):
    package = make_checkout(tmp_path / "book").package
    (package / "wide.py").write_text(
        textwrap.dedent(
            '''\
            def attend(first_argument: int, second_argument: int, third_argument: int,
                       fourth_argument: int = 4, *,
                       fifth_argument: float | None = None) -> int:  # noqa: ARG001
                """Docstring."""
                result: int = first_argument  # the first
                return result
            '''
        ),
        encoding="utf-8",
    )
    assert include.book_source("attention_mechanisms.wide.attend", package) == textwrap.dedent(
        """\
        def attend(
            first_argument,
            second_argument,
            third_argument,
            fourth_argument=4,
            *,
            fifth_argument=None,
        ):
            result = first_argument  # the first
            return result"""
    )


@pytest.mark.parametrize(
    ("qualified", "message"),
    [
        ("attention_mechanisms.multihead.Missing", "defines no class or function Missing"),
        ("torch.nn.Linear", r"expected attention_mechanisms\.<module>\.<name>"),
    ],
)
def test_a_bad_name_is_refused(qualified, message):
    with pytest.raises(BookError, match=message):
        include.book_source(qualified, PACKAGE)


def test_decorators_nested_functions_and_every_kind_of_argument(tmp_path):
    package = make_checkout(tmp_path / "book").package
    (package / "odd.py").write_text(
        textwrap.dedent(
            '''\
            import functools


            class Odd(nn.Module):
                """Doc."""

                scale: float = 2.0  # a class attribute with a value

                def __init__(self, *dims: int, bias: bool = True, **extra: object) -> None:
                    """Init doc."""
                    super().__init__()

                    def helper(x: Tensor) -> Tensor:
                        """Nested doc."""
                        return x * self.scale

                    self.helper = helper

                @functools.cache
                def forward(self, x: Tensor, /, mask: Tensor | None = None) -> Tensor:
                    return self.helper(x)
            '''
        ),
        encoding="utf-8",
    )
    assert include.book_source("attention_mechanisms.odd.Odd", package) == textwrap.dedent(
        """\
        class Odd(nn.Module):
            scale = 2.0  # a class attribute with a value

            def __init__(self, *dims, bias=True, **extra):
                super().__init__()

                def helper(x):
                    return x * self.scale

                self.helper = helper

            @functools.cache
            def forward(self, x, /, mask=None):
                return self.helper(x)"""
    )
