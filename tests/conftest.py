"""Makes the repository root importable, so that tests share `tests._extension`."""
