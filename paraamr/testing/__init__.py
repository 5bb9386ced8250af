"""Test and demo helpers: tiny models in real on-disk formats, a rule-based generator."""
