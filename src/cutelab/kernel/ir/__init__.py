"""The IR's building blocks: symbolic integers over thread and block indices (``symbolic``).

May import: ``cutelab.errors`` only.
"""
