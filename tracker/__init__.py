"""Noisy per-frame detections in, a stable table state and decoded legal moves out.

Public surface:
- `tracker.pipeline.Tracker`: frames in (motion gate, recognition on still frames, snapshots), events out;
- `tracker.decoder`: the `Decoder` protocol every game's decoder follows, `TrackerEvent`, the announcing rules;
- `tracker.loot_the_loop.LootTheLoopDecoder`: the first game's decoder;
- `tracker.replay.replay`: the whole pipeline on a video file (`tabletop replay`);
- `tracker.bench.run_bench`: whole rendered games against the frame-wise baseline (`tabletop bench tracker`).
"""
