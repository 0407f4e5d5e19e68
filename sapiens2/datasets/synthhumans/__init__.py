"""SynthHumans: a small, deterministic, procedurally rendered multi-task human dataset (numpy + OpenCV only)."""
from .generate import RENDERER_VERSION, ensure_synthhumans, generate_synthhumans, scene_for
from .manifest import SynthHumansFolderError
from .render import Rendering, render_image, render_scene
from .scene import SCENE_VARIETIES, Camera, Light, Scene, mirror_scene, sample_scene

__all__ = [
    'RENDERER_VERSION', 'SCENE_VARIETIES', 'Camera', 'Light', 'Rendering', 'Scene', 'SynthHumansFolderError',
    'ensure_synthhumans', 'generate_synthhumans', 'mirror_scene', 'render_image', 'render_scene', 'sample_scene',
    'scene_for'
]
