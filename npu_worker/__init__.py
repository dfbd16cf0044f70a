"""npu-worker: a streaming text-to-speech worker (ZipVoice ONNX on QNN/CUDA/CPU, espeak-ng, sovits proxy)."""

__version__ = "1.0.0"
PROTOCOL_VERSION = "v1.0"
