"""memdir.interfaces layer."""
