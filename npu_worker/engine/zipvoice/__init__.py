"""ZipVoice ONNX engine (`--backend zipvoice-onnx`): see docs/zipvoice.md and engine.py."""
