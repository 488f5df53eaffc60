"""memdir.llm layer."""
