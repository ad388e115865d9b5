"""Finding and reading standard playing cards in a camera frame with ONNX Runtime (no torch)."""
