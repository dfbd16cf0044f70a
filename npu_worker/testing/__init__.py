"""Tooling for tests and benchmarks, not part of the engine: synthetic ONNX model directories.

Needs `onnx` (the test and bench extras); the server never imports this package.
"""
