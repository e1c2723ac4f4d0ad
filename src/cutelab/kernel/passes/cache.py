"""Pass ``cache``: the cache operator of each global access.

Loads of read-only tensors get ``Options.load`` (``CUTELAB_CUDA_LOAD``): ``ldg`` (the read-only
path, default), ``nc128``/``nc256`` (the read-only path asking L2 to fetch 128/256-byte blocks),
``ldcs`` (streaming), ``ldcg`` (L2 only), ``ldca`` (the coherent path, cached in L1) or ``plain``; global stores ``Options.store``
(``CUTELAB_CUDA_STORE``): ``plain`` (default), ``stcs`` (streaming) or ``stcg``. Loads of written
tensors and shared accesses are ``plain``, and so are all loads of a kernel that stores through a
runtime address (``ir.nodes.stores_by_address``: it may write any tensor). The plan's ``cache[id(op)]`` holds the operator of
every Load and Store; off: all ``plain``.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import KernelIR, Load, Shared, Store, stores_by_address, walk


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    anywhere = stores_by_address(ir)  # a store through a runtime address may write any tensor: none is read-only
    for op in walk(ir.body):
        if isinstance(op, Load):
            ro = not op.param.written and not isinstance(op.param, Shared) and not anywhere
            plan.cache[id(op)] = options.load if ro else "plain"
        elif isinstance(op, Store):
            plan.cache[id(op)] = options.store if not isinstance(op.param, Shared) else "plain"
