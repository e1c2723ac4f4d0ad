"""What one call may cost: a size check before every large allocation, and an optional budget.

``charge(n, what)`` is called before an allocation of n elements (whole-domain evaluation of a
layout, the cells of a picture). It raises :class:`BudgetError` (a LayoutError) when n is past
``MAX_ELEMENTS`` (one allocation, for any caller), or when a :func:`budget` is active and n
would take the elements charged so far past the budget's total, or its deadline has passed.
``check_time(what)`` checks only the deadline (for loops that do not allocate).

The playground's server runs every request inside ``budget(elements=..., seconds=...)``, so one
request can neither hold gigabytes nor a thread for minutes; the CLI and library calls have no
budget and are bounded only by ``MAX_ELEMENTS``.

>>> with budget(elements=100, what="this request"):
...     charge(60, "a picture")
...     charge(60, "another")
Traceback (most recent call last):
...
cutelab.limits.BudgetError: another: 60 more elements would take this request past its budget of 100 elements (60 used)
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from .errors import LayoutError

__all__ = ["MAX_ELEMENTS", "BudgetError", "budget", "charge", "check_time"]

#: the most elements one allocation may have (2 GiB of int64 offsets)
MAX_ELEMENTS = 1 << 28


class BudgetError(LayoutError):
    """An operation would allocate or run past a size limit or a request's budget."""


class _Budget:
    __slots__ = ("elements", "used", "deadline", "seconds", "what")

    def __init__(self, elements: int | None, seconds: float | None, what: str):
        self.elements, self.used, self.what = elements, 0, what
        self.seconds = seconds
        self.deadline = None if seconds is None else time.monotonic() + seconds


_CURRENT: ContextVar[_Budget | None] = ContextVar("cutelab_budget", default=None)


@contextmanager
def budget(elements: int | None = None, seconds: float | None = None, what: str = "this call") -> Iterator[None]:
    """Inside the block, charges may total at most ``elements`` and run until ``seconds`` from now."""
    token = _CURRENT.set(_Budget(elements, seconds, what))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def charge(n: int, what: str) -> None:
    """Account for an allocation of n elements, before making it (BudgetError past a limit)."""
    n = int(n)
    if n > MAX_ELEMENTS:
        raise BudgetError(f"{what}: {n} elements is past the limit of {MAX_ELEMENTS} for one allocation")
    b = _CURRENT.get()
    if b is None:
        return
    _deadline(b, what)
    if b.elements is not None:
        if b.used + n > b.elements:
            raise BudgetError(f"{what}: {n} more elements would take {b.what} past its budget of "
                              f"{b.elements} elements ({b.used} used)")
        b.used += n


def check_time(what: str) -> None:
    """BudgetError when the active budget's deadline has passed (no-op without a budget)."""
    b = _CURRENT.get()
    if b is not None:
        _deadline(b, what)


def _deadline(b: _Budget, what: str) -> None:
    if b.deadline is not None and time.monotonic() > b.deadline:
        raise BudgetError(f"{what}: {b.what} ran past its time limit of {b.seconds:g} s")
