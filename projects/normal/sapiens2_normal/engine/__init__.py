from .normal_visualization_hook import NormalVisualizationHook

__all__ = ['NormalVisualizationHook']
