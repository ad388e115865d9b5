# Sourced by the training scripts (scripts/train-*.sh): stop at the first failure, work from the repository root, and
# name the two Pythons and the folders every recipe uses:
#   T    the training Python (torch, onnx): TRAIN_PYTHON, else .venv-train (scripts/setup-train.sh)
#   R    the runtime's Python (.venv, scripts/setup.sh)
#   OUT  where data and runs go (default out/); M where the finished models go (MODELS, default models/)
set -euo pipefail
cd "$(dirname "$0")/.."
T=${TRAIN_PYTHON:-.venv-train/bin/python}
R=.venv/bin/python
OUT=${OUT:-out}
M=${MODELS:-models}
