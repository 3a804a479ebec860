"""gradlint: a linter for PyTorch autograd pitfalls."""

__version__ = "0.1.0"
