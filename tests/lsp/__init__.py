"""Tests of `kb lsp`, driven over stdio as an editor drives it (tests/lsp/client.py)."""
