"""memdir.workspace layer."""
