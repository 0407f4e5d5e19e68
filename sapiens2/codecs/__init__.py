"""Keypoint codecs (registered in mmpose's ``KEYPOINT_CODECS``) and fast decoding."""
from .fast_udp_decode import udp_dark_decode
from .fast_udp_heatmap import FastUDPHeatmap

__all__ = ['FastUDPHeatmap', 'udp_dark_decode']
