"""Dice read from the camera: found in the frame (`find`), their top face read (`read`), and a value reported only
once a die has come to rest (`watch`). Vision only: what a roll means is the games' business."""
