from .pointmap_visualization_hook import PointmapVisualizationHook

__all__ = ['PointmapVisualizationHook']
