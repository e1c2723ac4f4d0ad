"""``cutlass.jax.testing``: making JAX test tensors and the GEMM operands' mode orders.

A GEMM's operands are named by their dimensions: A is ``mkl``, B ``nkl``, C/D ``mnl`` as the kernel
sees them; in memory (the JAX array's row-major shape) the batch ``l`` comes first and the major
dimension last.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # importable without JAX (making tensors then says it needs it)
    jax = jnp = None


def reorder_modes(src: Sequence[str], target: Sequence[str]) -> Tuple[int, ...]:
    """The TensorSpec.mode that presents dimensions named src (the array's order) in target's order.

    >>> reorder_modes("lmk", "mkl")
    (1, 2, 0)
    """
    where = {d: i for i, d in enumerate(src)}
    return tuple(where[d] for d in target)


def _major(table: dict, d: str, operand: str) -> str:
    if d not in table:
        raise ValueError(f"{operand}'s major dimension must be one of {sorted(table)}, got {d!r}")
    return table[d]


def gemm_a_major(d: str) -> str:
    """A's dimension order in memory for major dimension d ('k' or 'm')."""
    return _major({"k": "lmk", "m": "lkm"}, d, "A")


def gemm_b_major(d: str) -> str:
    """B's dimension order in memory for major dimension d ('k' or 'n')."""
    return _major({"k": "lnk", "n": "lkn"}, d, "B")


def gemm_c_major(d: str) -> str:
    """C/D's dimension order in memory for major dimension d ('n' or 'm')."""
    return _major({"n": "lmn", "m": "lnm"}, d, "C")


def gemm_a_mode(d: str) -> Tuple[int, ...]:
    return reorder_modes(gemm_a_major(d), "mkl")


def gemm_b_mode(d: str) -> Tuple[int, ...]:
    return reorder_modes(gemm_b_major(d), "nkl")


def gemm_c_mode(d: str) -> Tuple[int, ...]:
    return reorder_modes(gemm_c_major(d), "mnl")


def _shape(order: str, **ext: int) -> Tuple[int, ...]:
    return tuple(ext[c] for c in order)


def gemm_a_shape(l: int, m: int, k: int, major: str) -> Tuple[int, ...]:  # noqa: E741
    return _shape(gemm_a_major(major), l=l, m=m, k=k)


def gemm_b_shape(l: int, n: int, k: int, major: str) -> Tuple[int, ...]:  # noqa: E741
    return _shape(gemm_b_major(major), l=l, n=n, k=k)


def gemm_c_shape(l: int, m: int, n: int, major: str) -> Tuple[int, ...]:  # noqa: E741
    return _shape(gemm_c_major(major), l=l, m=m, n=n)


def get_gemm_shape_from_tensors(a: Any, b: Any) -> Tuple[Any, Any, Any, Any]:
    """(M, N, K, L) of the kernel's A (mkl) and B (nkl) tensors."""
    m, k, l = a.shape  # noqa: E741
    return m, b.shape[0], k, l


def create_tensor(shape: Tuple[int, ...], dtype: Any, key: Any, *, minval: float = -2.0, maxval: float = 2.0,
                  fill_value: Optional[float] = None, fill_arange: bool = False) -> Any:
    """A JAX array of shape and dtype: uniform in [minval, maxval) from key (drawn in float32), or
    fill_value everywhere, or 0, 1, 2, ... in row-major order (fill_arange)."""
    if jax is None:
        raise ModuleNotFoundError("cutlass.jax.testing.create_tensor needs JAX (pip install jax)", name="jax")
    if fill_arange:
        return jnp.arange(int(jnp.prod(jnp.array(shape))) if shape else 1, dtype=dtype).reshape(shape)
    if fill_value is not None:
        return jnp.full(shape, fill_value, dtype=dtype)
    return jax.random.uniform(key, shape, dtype=jnp.float32, minval=minval, maxval=maxval).astype(dtype)


def _operand(shape: Tuple[int, ...], dtype: Any, key: Any, **kw: Any) -> Any:
    return create_tensor(shape, dtype, key, **kw)


def create_a_tensor(l: int, m: int, k: int, major: str, dtype: Any, key: Any, **kw: Any) -> Any:  # noqa: E741
    return _operand(gemm_a_shape(l, m, k, major), dtype, key, **kw)


def create_b_tensor(l: int, n: int, k: int, major: str, dtype: Any, key: Any, **kw: Any) -> Any:  # noqa: E741
    return _operand(gemm_b_shape(l, n, k, major), dtype, key, **kw)


def create_cd_tensor(l: int, m: int, n: int, major: str, dtype: Any, key: Any, **kw: Any) -> Any:  # noqa: E741
    return _operand(gemm_c_shape(l, m, n, major), dtype, key, **kw)
