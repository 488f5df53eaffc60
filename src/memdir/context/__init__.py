"""memdir.context layer."""
