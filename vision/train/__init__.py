"""Training the recognisers: datasets derived from the synthetic engine's output, and ultralytics runs.

Only this package imports ultralytics and torch, and only in the training environment
(`scripts/setup-train.sh`); the runtime in `vision.recognise` loads the exported ONNX files with ONNX Runtime.
"""
