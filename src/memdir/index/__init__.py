"""memdir.index layer."""
