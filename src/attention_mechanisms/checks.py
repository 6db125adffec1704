"""Argument and input checks shared by every module, and by the classes the chapters show.

A chapter shows each class as the book writes it, plus the calls to these checks
(``self.d_in = check_size("d_in", d_in)``), so that the class a reader runs from the page
gives the same clear errors as the package's.

All user-facing validation lives here so every message has the same shape:
``<argument> must be <what was expected>; got <what came>``. The checks raise
``TypeError`` for a value of the wrong kind and ``ValueError`` for a value of the
right kind that is out of range. They never use ``assert``, which ``python -O`` removes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import torch

FREQ_CONFIG_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_context_length")


def check_size(name: str, value: object) -> int:
    """Return ``value`` if it is a positive ``int`` (a size or a count)."""
    # bool is a subclass of int, but `SelfAttention_v1(True, 2)` is never intended.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive int; got {value!r} ({type(value).__name__})")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int; got {value}")
    return int(value)


def check_dropout(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a probability in ``[0, 1)``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float in [0, 1); got {value!r} ({type(value).__name__})")
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(f"{name} must be a float in [0, 1); got {value}")
    return float(value)


def check_heads(d_out: int, num_heads: int) -> int:
    """Return the per-head size ``d_out // num_heads`` if the split is exact."""
    if d_out % num_heads != 0:
        raise ValueError(
            f"d_out must be divisible by num_heads; got d_out={d_out}, num_heads={num_heads} "
            f"(remainder {d_out % num_heads})"
        )
    return d_out // num_heads


def check_groups(num_heads: int, num_kv_groups: int) -> int:
    """Return the number of query heads per key-value group if the split is exact."""
    if num_heads % num_kv_groups != 0:
        raise ValueError(
            f"num_heads must be divisible by num_kv_groups; got num_heads={num_heads}, "
            f"num_kv_groups={num_kv_groups} (remainder {num_heads % num_kv_groups})"
        )
    return num_heads // num_kv_groups


def check_flag(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool`` (such as ``qkv_bias``)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool; got {value!r} ({type(value).__name__})")
    return value


def check_position(name: str, value: object) -> int:
    """Return ``value`` if it is an ``int >= 0`` (a position in the sequence)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= 0; got {value!r} ({type(value).__name__})")
    if value < 0:
        raise ValueError(f"{name} must be an int >= 0; got {value}")
    return int(value)


def check_like_parameters(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Return ``x`` if it has the dtype and the device of the module's parameters."""
    if x.dtype != weight.dtype:
        raise TypeError(
            f"x must be {weight.dtype} like the module's parameters; got {x.dtype}: convert "
            f"x with x.to({weight.dtype}), or the module with .to({x.dtype})"
        )
    if x.device != weight.device:
        raise ValueError(
            f"x must be on {weight.device} like the module's parameters; got {x.device}: "
            f"move x with x.to({str(weight.device)!r}), or the module with .to(...)"
        )
    return x


def check_floating(name: str, tensor: object) -> torch.Tensor:
    """Return ``tensor`` if it is a floating-point ``torch.Tensor``."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype (e.g. torch.float32); got {tensor.dtype}"
        )
    return tensor


def check_tokens(
    x: object, d_in: int, context_length: int | None = None, name: str = "x"
) -> torch.Tensor:
    """Return ``x`` if it is ``(num_tokens, d_in)`` or ``(batch, num_tokens, d_in)``."""
    x = check_floating(name, x)
    if x.dim() not in (2, 3):
        raise ValueError(
            f"{name} must be 2-D (num_tokens, d_in) or 3-D (batch, num_tokens, d_in); "
            f"got {x.dim()}-D with shape {tuple(x.shape)}"
        )
    if x.shape[-1] != d_in:
        raise ValueError(f"{name} must have last dimension d_in={d_in}; got shape {tuple(x.shape)}")
    num_tokens = x.shape[-2]
    if num_tokens == 0:
        raise ValueError(f"{name} must hold at least one token; got shape {tuple(x.shape)}")
    if context_length is not None and num_tokens > context_length:
        raise ValueError(
            f"{name} has {num_tokens} tokens, more than context_length={context_length}; "
            f"shorten the input or build the module with a larger context_length"
        )
    return x


def check_hide_mask(hide_mask: object, num_queries: int, num_keys: int) -> torch.Tensor:
    """Return ``hide_mask`` if it is boolean and broadcasts to ``(..., num_queries, num_keys)``."""
    if not isinstance(hide_mask, torch.Tensor):
        raise TypeError(f"hide_mask must be a torch.Tensor; got {type(hide_mask).__name__}")
    if hide_mask.dtype != torch.bool:
        raise TypeError(
            "hide_mask must have dtype torch.bool (True = hide this key from this query); "
            f"got {hide_mask.dtype}. For the book's float buffer use mask.bool()"
        )
    expected = f"(..., {num_queries}, {num_keys}) or broadcastable to it"
    if hide_mask.dim() < 2:
        raise ValueError(
            f"hide_mask must have shape {expected}; got shape {tuple(hide_mask.shape)}"
        )
    rows, cols = hide_mask.shape[-2:]
    if rows not in (1, num_queries) or cols not in (1, num_keys):
        raise ValueError(
            f"hide_mask must have shape {expected}; got shape {tuple(hide_mask.shape)}"
        )
    return hide_mask


def check_same_dtype(**tensors: torch.Tensor) -> None:
    """Raise if the given tensors do not share one dtype."""
    dtypes = {name: t.dtype for name, t in tensors.items()}
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{name}={dtype}" for name, dtype in dtypes.items())
        raise TypeError(f"{', '.join(dtypes)} must share one dtype; got {listed}")


def _check_sequence(name: str, tensor: object) -> torch.Tensor:
    """Return ``tensor`` if it is floating point with at least two dimensions."""
    tensor = check_floating(name, tensor)
    if tensor.dim() < 2:
        raise ValueError(
            f"{name} must have at least 2 dimensions (..., tokens, features); "
            f"got shape {tuple(tensor.shape)}"
        )
    return tensor


def check_qkv(query: object, key: object, value: object) -> None:
    """Check that ``(..., L, d_k)``, ``(..., S, d_k)`` and ``(..., S, d_v)`` fit together."""
    query = _check_sequence("query", query)
    key = _check_sequence("key", key)
    value = _check_sequence("value", value)
    check_same_dtype(query=query, key=key, value=value)
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must have the same last dimension d_k; "
            f"got query {tuple(query.shape)} and key {tuple(key.shape)}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            "key and value must have the same number of positions S (dimension -2); "
            f"got key {tuple(key.shape)} and value {tuple(value.shape)}"
        )


def check_new_kv(
    keys: object, values: object, cached: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``keys`` and ``values`` if a KV cache holding the ``cached`` keys can take them.

    They must be ``(batch, num_heads, num_tokens, head_dim)`` alike, must not require grad (a
    cache is for inference), and must match the ``cached`` keys in all but ``num_tokens``.
    """
    keys, values = check_floating("keys", keys), check_floating("values", values)
    if keys.requires_grad or values.requires_grad:
        raise ValueError(
            f"{'keys' if keys.requires_grad else 'values'} must not require grad: KVCache is for "
            "inference (wrap generation in torch.no_grad() or torch.inference_mode()); got a "
            "tensor with requires_grad=True"
        )
    if keys.dim() != 4 or keys.shape != values.shape:
        raise ValueError(
            "keys and values must both be (batch, num_heads, num_tokens, head_dim); got "
            f"{tuple(keys.shape)} and {tuple(values.shape)}"
        )
    if (values.dtype, values.device) != (keys.dtype, keys.device):
        raise ValueError(
            f"values must be {keys.dtype} on {keys.device} like keys; "
            f"got {values.dtype} on {values.device}"
        )
    if cached is None:
        return keys, values
    (b, h, _, d), (cb, ch, _, cd) = keys.shape, cached.shape
    if (b, h, d) != (cb, ch, cd):
        raise ValueError(
            f"keys must be (batch={cb}, num_heads={ch}, num_tokens, head_dim={cd}) like the "
            f"cached ones; got {tuple(keys.shape)}; use one KVCache per module and batch"
        )
    if (keys.dtype, keys.device) != (cached.dtype, cached.device):
        raise ValueError(
            f"keys must be {cached.dtype} on {cached.device} like the cached ones; "
            f"got {keys.dtype} on {keys.device}"
        )
    return keys, values


def check_rope_inputs(x: object, cos: object, sin: object, offset: object) -> tuple[int, int]:
    """Return ``(T, d)`` of ``x`` if ``x``, ``cos``, ``sin`` and ``offset`` fit together."""
    x, cos, sin = check_floating("x", x), check_floating("cos", cos), check_floating("sin", sin)
    if x.dim() != 4 or x.shape[-1] % 2 != 0:
        raise ValueError(
            "x must be 4-D (batch, num_heads, num_tokens, head_dim) with an even head_dim; "
            f"got shape {tuple(x.shape)}"
        )
    if cos.dim() != 2 or cos.shape != sin.shape or cos.shape[1] != x.shape[-1]:
        raise ValueError(
            f"cos and sin must both be (num_positions, head_dim={x.shape[-1]}) from "
            f"compute_rope_params; got cos {tuple(cos.shape)} and sin {tuple(sin.shape)}"
        )
    if not x.device == cos.device == sin.device:
        raise ValueError(
            f"x, cos and sin must be on one device; got x on {x.device}, cos on {cos.device}, "
            f"sin on {sin.device}: move cos and sin with .to(x.device)"
        )
    start = check_position("offset", offset)
    if start + x.shape[2] > cos.shape[0]:
        raise ValueError(
            f"x covers positions {start} to {start + x.shape[2] - 1}, but cos and sin hold "
            f"only {cos.shape[0]}; call compute_rope_params with a larger context_length"
        )
    return x.shape[2], x.shape[3]


def check_freq_config(freq_config: object) -> Mapping[str, float]:
    """Return ``freq_config`` if it maps each of `FREQ_CONFIG_KEYS` to a positive number."""
    keys = ", ".join(FREQ_CONFIG_KEYS)
    if not isinstance(freq_config, Mapping):
        got = type(freq_config).__name__
        raise TypeError(f"freq_config must be None or a dict with the keys {keys}; got {got}")
    if missing := [key for key in FREQ_CONFIG_KEYS if key not in freq_config]:
        raise ValueError(
            f"freq_config lacks {', '.join(missing)}; it needs {keys} (Hugging Face's "
            "rope_scaling calls the last one original_max_position_embeddings)"
        )
    for key in FREQ_CONFIG_KEYS:
        value = freq_config[key]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"freq_config[{key!r}] must be a number; got {value!r}")
        if not 0 < float(value) < math.inf:
            raise ValueError(f"freq_config[{key!r}] must be positive and finite; got {value}")
    low, high = freq_config["low_freq_factor"], freq_config["high_freq_factor"]
    if not high > low:
        raise ValueError(
            "freq_config['high_freq_factor'] must be above freq_config['low_freq_factor'] "
            f"(the pairs between them are blended); got {high} and {low}"
        )
    return freq_config
