"""memdir.bench: benchmark harnesses (LoCoMo budgeted recall, scale). They print figures."""
