"""3D skeletons as a PLY file: the keypoints as coloured vertices and the layout's links as edges (a mesh of lines
that MeshLab, CloudCompare or Blender open)."""
from typing import List, Sequence, Tuple

import numpy as np

from sapiens2.utils.atomic_save import atomic_write_text


def write_skeleton_ply(path: str, skeletons: np.ndarray, links: Sequence[Sequence[int]],
                       colors: Sequence[Tuple[int, int, int]]) -> str:
    """Write ``skeletons`` (N, K, 3) metres (NaN: not seen, left out with its edges), their ``links`` (L, 2) and one
    RGB colour per person as ASCII PLY; return ``path``."""
    vertices: List[str] = []
    edges: List[str] = []
    for points, color in zip(skeletons, colors):
        index = {}
        for k, point in enumerate(points):
            if not np.isnan(point).any():
                index[k] = len(vertices)
                vertices.append('{:.5f} {:.5f} {:.5f} {} {} {}'.format(*point, *color))
        edges += [f'{index[a]} {index[b]}' for a, b in links if a in index and b in index]
    header = ['ply', 'format ascii 1.0', f'element vertex {len(vertices)}', 'property float x', 'property float y',
              'property float z', 'property uchar red', 'property uchar green', 'property uchar blue',
              f'element edge {len(edges)}', 'property int vertex1', 'property int vertex2', 'end_header']
    atomic_write_text(path, '\n'.join(header + vertices + edges) + '\n')
    return path


def read_skeleton_ply(path: str) -> dict:
    """Read a file of :func:`write_skeleton_ply`: ``points`` (V, 3), ``colors`` (V, 3) uint8, ``edges`` (E, 2)."""
    with open(path) as f:
        lines = f.read().splitlines()
    end = lines.index('end_header')
    counts = {line.split()[1]: int(line.split()[2]) for line in lines[:end] if line.startswith('element')}
    body = [line.split() for line in lines[end + 1:]]
    vertices = np.array(body[:counts['vertex']], np.float64).reshape(-1, 6)
    edges = np.array(body[counts['vertex']:counts['vertex'] + counts['edge']], np.int64).reshape(-1, 2)
    return dict(points=vertices[:, :3], colors=vertices[:, 3:].astype(np.uint8), edges=edges)
