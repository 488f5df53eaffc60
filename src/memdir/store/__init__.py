"""memdir.store layer."""
