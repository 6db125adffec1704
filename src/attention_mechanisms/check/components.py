"""Find the learner's chapter-3 components and place each in a role of the book.

A component is a class derived from ``nn.Module`` or a function that the learner's cells
defined. Its role is found from its name first (the book's names and obvious variants:
``SelfAttentionV2``, ``causal_attention``, ``MHA``), then from its constructor: which of the
book's parameters it takes, named as the book does or as learners do (``dim_in``,
``embedding_dim``, ``head_count``). Parameters whose names say nothing are mapped by position.
"""

from __future__ import annotations

import inspect
import linecache
import re
from dataclasses import dataclass, field
from types import FunctionType

from torch import nn

CLASS_ROLES = (
    "SelfAttention_v1",
    "SelfAttention_v2",
    "CausalAttention",
    "MultiHeadAttentionWrapper",
    "MultiHeadAttention",
)
# The book's constructor for each role, in order.
BOOK_PARAMETERS = {
    "SelfAttention_v1": ("d_in", "d_out"),
    "SelfAttention_v2": ("d_in", "d_out", "qkv_bias"),
    "CausalAttention": ("d_in", "d_out", "context_length", "dropout", "qkv_bias"),
    "MultiHeadAttentionWrapper": (
        "d_in", "d_out", "context_length", "dropout", "num_heads", "qkv_bias",
    ),
    "MultiHeadAttention": ("d_in", "d_out", "context_length", "dropout", "num_heads", "qkv_bias"),
    # Today's attention, with the package's signatures (`todays`).
    "GroupedQueryAttention": ("d_in", "d_out", "dropout", "num_heads", "num_kv_groups", "qkv_bias"),
    "MultiHeadAttentionWithSWA": (
        "d_in", "d_out", "dropout", "num_heads", "qkv_bias", "sliding_window_size",
    ),
    "MultiHeadLatentAttention": ("d_in", "d_out", "dropout", "num_heads", "qkv_bias", "latent_dim"),
    "GatedDeltaNet": ("d_in", "d_out", "dropout", "num_heads", "qkv_bias"),
}  # fmt: skip
_NAMES = {
    "selfattentionv1": "SelfAttention_v1",
    "selfattention1": "SelfAttention_v1",
    "selfattentionv2": "SelfAttention_v2",
    "selfattention2": "SelfAttention_v2",
    "causalattention": "CausalAttention",
    "causalselfattention": "CausalAttention",
    "multiheadattentionwrapper": "MultiHeadAttentionWrapper",
    "mhawrapper": "MultiHeadAttentionWrapper",
    "multiheadattention": "MultiHeadAttention",
    "multiheadselfattention": "MultiHeadAttention",
    "multiheadcausalattention": "MultiHeadAttention",
    "causalmultiheadattention": "MultiHeadAttention",
    "mha": "MultiHeadAttention",
    "multiheadwrapper": "MultiHeadAttentionWrapper",
    "groupedqueryattention": "GroupedQueryAttention",
    "gqa": "GroupedQueryAttention",
    "multiqueryattention": "GroupedQueryAttention",
    "multiheadattentionwithswa": "MultiHeadAttentionWithSWA",
    "slidingwindowattention": "MultiHeadAttentionWithSWA",
    "swa": "MultiHeadAttentionWithSWA",
    "multiheadlatentattention": "MultiHeadLatentAttention",
    "latentattention": "MultiHeadLatentAttention",
    "mla": "MultiHeadLatentAttention",
    "gateddeltanet": "GatedDeltaNet",
}
# What learners call the book's parameters.
_SYNONYMS = {
    "d_in": {"d_in", "dim_in", "in_dim", "input_dim", "embedding_dim", "embed_dim", "d_model",
             "n_embd", "emb_dim", "in_features", "hidden_size", "hidden_dim"},
    "d_out": {"d_out", "dim_out", "out_dim", "output_dim", "out_features"},
    "context_length": {"context_length", "context_len", "block_size", "max_len", "seq_len",
                       "max_seq_len", "ctx_len", "n_ctx", "max_length"},
    "dropout": {"dropout", "drop_rate", "dropout_rate", "p_drop", "attn_dropout", "attn_pdrop",
                "dropout_p"},
    "num_heads": {"num_heads", "n_heads", "n_head", "heads", "head_count", "num_head", "nhead",
                  "num_attention_heads"},
    "qkv_bias": {"qkv_bias", "bias", "use_bias", "add_bias"},
    "num_kv_groups": {"num_kv_groups", "n_kv_groups", "num_kv_heads", "n_kv_heads", "kv_groups",
                      "num_groups", "n_groups"},
    "sliding_window_size": {"sliding_window_size", "sliding_window", "window_size", "window"},
    "latent_dim": {"latent_dim", "kv_lora_rank", "d_latent", "latent_size", "d_c"},
}  # fmt: skip
# What each of today's roles takes that chapter 3's do not: a learner's class that takes it
# is placed in that role whatever its name.
_TODAY_PARAMETERS = {
    "num_kv_groups": "GroupedQueryAttention",
    "sliding_window_size": "MultiHeadAttentionWithSWA",
    "latent_dim": "MultiHeadLatentAttention",
}


@dataclass
class Component:
    """Something the learner defined, and what the checker makes of it."""

    name: str
    obj: object
    role: str | None
    reason: dict = field(default_factory=dict)  # why no role, as a message, when role is None
    # The book's parameter name -> the learner's, for a class.
    parameters: dict[str, str] = field(default_factory=dict)


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def constructor_parameters(cls: type[object]) -> list[str]:
    """The names of the parameters of ``cls.__init__``, without ``self``."""
    signature = inspect.signature(cls.__init__)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in list(signature.parameters.values())[1:] if p.kind in kinds]


CONFIG = "config"  # the key of a constructor that takes one configuration for everything
_CONFIG_NAMES = {"cfg", "config", "conf", "configs", "args", "hparams", "params"}


class Config(dict):
    """A model configuration that answers every name the book's parameters go by, as a
    dict (the book's ``cfg["emb_dim"]``) or as attributes (nanoGPT's ``config.n_embd``)."""

    def __getattr__(self, name: str) -> object:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:  # the book's names only, as the report shows it
        shown = ", ".join(f"{book}={self[book]!r}" for book in _SYNONYMS if book in self)
        return f"<config: {shown}>"


def config(values: dict[str, object]) -> Config:
    """``values`` of the book's parameters under each of their names."""
    return Config(
        {
            name: values[book]
            for book, names in _SYNONYMS.items()
            if book in values
            for name in names
        }
    )


def map_parameters(learner: list[str], role: str) -> dict[str, str]:
    """The book's parameter names of ``role`` mapped to the learner's: by name, then position;
    a lone configuration parameter (``cfg``, ``config``) under `CONFIG`."""
    if len(learner) == 1 and learner[0].lower() in _CONFIG_NAMES:
        return {CONFIG: learner[0]}
    mapping: dict[str, str] = {}
    for name in learner:
        book = next((book for book, names in _SYNONYMS.items() if name in names), None)
        if book in BOOK_PARAMETERS[role] and book not in mapping:
            mapping[book] = name
    # Names that say nothing (head_size, d): the book's parameters left, in order.
    unnamed = [name for name in learner if name not in mapping.values()]
    left = [book for book in BOOK_PARAMETERS[role] if book not in mapping]
    mapping |= dict(zip(left, unnamed, strict=False))
    return mapping


def _class_role(cls: type[object]) -> tuple[str | None, dict]:
    names = set(constructor_parameters(cls))
    known = {book for book, synonyms in _SYNONYMS.items() if names & synonyms}
    for book, today in _TODAY_PARAMETERS.items():
        if book in known:
            return today, {}
    if (role := _NAMES.get(_key(cls.__name__))) is not None:
        # A "CausalSelfAttention" with heads, as nanoGPT names it, is multi-head attention.
        heads = "num_heads" in known or re.search(r"\bn_heads?\b|num_heads", init_source(cls))
        multi = role == "CausalAttention" and bool(heads)
        return ("MultiHeadAttention" if multi else role), {}
    if {"num_heads"} <= known:  # the wrapper: a list of heads and no output projection
        source = init_source(cls)
        projects = re.search(r"(out|proj|w_o\b)\w*\s*=", source, re.IGNORECASE)
        wraps = "ModuleList" in source and not projects
        return ("MultiHeadAttentionWrapper" if wraps else "MultiHeadAttention"), {}
    if {"context_length"} <= known or {"dropout"} <= known:
        return "CausalAttention", {}
    if {"d_in", "d_out"} <= known:
        linear = "Linear(" in init_source(cls)
        return ("SelfAttention_v2" if linear else "SelfAttention_v1"), {}
    signature = f"{cls.__name__}({', '.join(constructor_parameters(cls))})"
    return None, {"key": "reason_no_class", "signature": signature}


def init_source(cls: type[object]) -> str:
    """The source of the class's own ``__init__`` (not of other classes in its cell)."""
    try:
        return inspect.getsource(cls.__init__)
    except (OSError, TypeError):
        return ""


def source_of(obj: object) -> str:
    """The learner's source of a function, or of the cell that defined a class.

    (``inspect.getsource`` cannot find a class that a cell defined: it looks in the file of
    the module ``__main__``, which is not the cell.)
    """
    if inspect.isfunction(obj):
        return "".join(linecache.getlines(obj.__code__.co_filename))
    for member in vars(obj).values():
        code = getattr(member, "__code__", None)
        if code is not None:
            return "".join(linecache.getlines(code.co_filename))
    return ""


_NOT_HELPERS = ("plot", "show", "print", "draw", "visuali", "display", "get")
_ROTARY = re.compile(r"(?:^|_)(?:rope|rotary)(?:_|$)")  # a word: not the "rope" of "property"


def _function_role(function: FunctionType) -> tuple[str | None, dict]:
    """The role of a function: a stand-alone attention function, or a helper of 3.3 that
    takes what the book's takes (a helper named plot_..., print_... is the learner's own)."""
    name = _key(function.__name__)
    parameters = list(inspect.signature(function).parameters)
    if name.startswith(_NOT_HELPERS):
        return None, {"key": "reason_shows", "name": function.__name__}
    if _ROTARY.search(function.__name__.lower()):  # compute_rope_params, apply_rotary_emb
        return ("compute_rope_params" if "param" in name or "freq" in name else "apply_rope"), {}
    if len(parameters) >= 3 and [_key(p)[:1] for p in parameters[:3]] == ["q", "k", "v"]:
        return "attention_function", {}
    if "softmax" in name and parameters:
        return "softmax", {}
    if "context" in name and len(parameters) >= 2:  # (weights, inputs)
        return "context", {}
    if "score" in name and parameters:
        return "scores", {}
    if "attention" in name and len(parameters) >= 3:
        return "attention_function", {}
    signature = f"{function.__name__}({', '.join(parameters)})"
    return None, {"key": "reason_no_helper", "signature": signature}


def find_components(namespace: dict) -> list[Component]:
    """The classes and functions that the learner's cells defined, in definition order."""
    found: list[Component] = []
    seen: set[int] = set()
    for name, obj in namespace.items():
        if id(obj) in seen or getattr(obj, "__module__", None) != "__main__":
            continue
        if inspect.isclass(obj) and issubclass(obj, nn.Module):
            role, reason = _class_role(obj)
            mapping = map_parameters(constructor_parameters(obj), role) if role else {}
            found.append(Component(name, obj, role, reason, mapping))
        elif inspect.isfunction(obj):
            role, reason = _function_role(obj)
            if role is not None:  # other functions are the learner's own business
                found.append(Component(name, obj, role, reason))
        else:
            continue
        seen.add(id(obj))
    return found
