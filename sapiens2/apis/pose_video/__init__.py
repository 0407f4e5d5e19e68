"""Pose beyond one model call: top-down crops of person boxes (given, detected, or the whole image) and, across the
frames of videos and streams, track ids, One-Euro smoothing and boxes between detector runs."""
