"""memdir.embeddings layer."""
