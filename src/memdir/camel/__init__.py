"""memdir.camel layer."""
