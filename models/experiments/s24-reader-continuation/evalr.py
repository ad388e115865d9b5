"""scratch: index top-1 of reader checkpoints on held-out legible crops, by source (scene / flat)."""
import sys, numpy as np, torch
from pathlib import Path
from vision.train.reader_data import CropSet
from vision.train.reader_net import CornerReader, to_tensor

from vision.train import reader_net as RN
torch.set_num_threads(int(sys.argv[1]))
import dataclasses
vd = CropSet.load(Path("out/reader_crops/val-cal.npz"))
faded = dataclasses.replace(vd, x=np.clip((vd.x.astype(np.float32) - 127.5) * 0.3 + 127.5 + 25, 0, 255).astype(np.uint8))
sets = {"val_debian": vd, "val_proc": CropSet.load(Path("out/gpu/crops/proc-val.npz")), "val_debian_faded30": faded}
for ck in sys.argv[2:]:
    saved = torch.load(ck, weights_only=False)
    m = CornerReader(saved.get("arch", "small"), saved.get("vocabulary", "cards")); m.load_state_dict(saved["model"]); m.eval()
    out = [Path(ck).parent.name, f"step {saved['state']['step']}"]
    for name, s in sets.items():
        legible = (s.rank != RN.ILLEGIBLE) & (s.rank != m.none_rank) & (s.face != RN.NOT_A_CARD)
        idx = np.nonzero(legible)[0]
        preds_r, preds_s = [], []
        with torch.no_grad():
            for i in range(0, len(idx), 512):
                r, su, _, _ = m(to_tensor(s.x[idx[i:i+512]]))
                preds_r.append(r.argmax(1).numpy()); preds_s.append(su.argmax(1).numpy())
        pr, ps = np.concatenate(preds_r), np.concatenate(preds_s)
        ok = (pr == s.rank[idx]) & ((s.suit[idx] == RN.NO_SUIT) | (ps == s.suit[idx]))
        scene = s.source[idx] == "scene"
        out.append(f"{name} {ok.mean():.4f} (scene {ok[scene].mean() if scene.any() else float('nan'):.4f} / flat {ok[~scene].mean():.4f}, n={len(ok)})")
    print(" | ".join(out), flush=True)
