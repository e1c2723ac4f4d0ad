"""Warpgroup-level atoms: SM90 ``wgmma`` ops and the shared-memory layout atoms they read."""

from .mma import *  # noqa: F401,F403
from .helpers import *  # noqa: F401,F403
