#!/usr/bin/env bash
# Creates .venv-train: the training environment for the recognisers (torch CPU, ultralytics, onnx), beside the
# runtime's .venv. The product never needs it: the runtime loads the exported ONNX files with ONNX Runtime.
# Safe to run again. Then: bash scripts/train-cards.sh (models/cards.md says what it does and how long it takes).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-train
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || { echo "setup-train: could not create $VENV (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  torch==2.13.0 torchvision==0.28.0 ultralytics==8.4.190 onnx==1.23.2 onnxruntime tqdm pyttsx3 imageio-ffmpeg
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e .
# ultralytics pulls opencv-python, which shares cv2/ with the runtime's opencv-python-headless: keep one
"$VENV/bin/python" - <<'PY' || {
import torch, torchvision.ops  # noqa: F401
torchvision.ops.nms(torch.zeros((1, 4)), torch.zeros(1), 0.5)
PY
  if [ -n "${TV_SHIM:-}" ]; then
    site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    cp "$TV_SHIM" "$site/tv_cpu_shim.py" && echo "import tv_cpu_shim" > "$site/tv_cpu_shim.pth"
    echo "setup-train: installed the torchvision CPU shim from $TV_SHIM"
  else
    echo "setup-train: torchvision's ops do not load with this torch (a CUDA-linked wheel on a CPU torch)." >&2
    echo "  Install a matching torchvision, or set TV_SHIM=/path/to/tv_cpu_shim.py and run again." >&2
    exit 1
  fi
}
echo "setup-train: ready ($VENV/bin/python -m vision.train.fit --help)"
