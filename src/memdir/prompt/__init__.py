"""memdir.prompt layer."""
