"""Warp-level atoms: SM80/SM89 ``mma.sync`` ops and ``ldmatrix``/``stmatrix`` copies."""

from .mma import *  # noqa: F401,F403
from .copy import *  # noqa: F401,F403
