"""Memory-access analysis (being written)."""
