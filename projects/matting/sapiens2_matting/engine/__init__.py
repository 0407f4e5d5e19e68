from .matting_visualization_hook import MattingVisualizationHook

__all__ = ['MattingVisualizationHook']
