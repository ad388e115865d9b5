"""Noisy per-frame detections in, a stable table state and decoded legal moves out.

Built by the tracker issue; the package exists now so the layout is in place.
"""
