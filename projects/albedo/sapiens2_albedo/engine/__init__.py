from .albedo_visualization_hook import AlbedoVisualizationHook

__all__ = ['AlbedoVisualizationHook']
