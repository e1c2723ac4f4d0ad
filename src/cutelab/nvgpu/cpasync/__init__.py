"""Asynchronous copies: SM80 ``cp.async`` ops."""

from .copy import *  # noqa: F401,F403
