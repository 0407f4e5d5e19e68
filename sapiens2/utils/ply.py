"""Write coloured point clouds as binary little-endian PLY files (no open3d needed)."""
from typing import Optional

import numpy as np


def write_ply(path: str, points: np.ndarray, colors: Optional[np.ndarray] = None) -> str:
    """Write points (N, 3) and optional RGB uint8 colours (N, 3) to a binary PLY file; returns ``path``."""
    points = np.asarray(points, dtype=np.float32).reshape(-1, 3)
    fields = [('x', '<f4'), ('y', '<f4'), ('z', '<f4')]
    header = ['ply', 'format binary_little_endian 1.0', f'element vertex {len(points)}',
              'property float x', 'property float y', 'property float z']
    if colors is not None:
        colors = np.asarray(colors).reshape(-1, 3)
        if len(colors) != len(points):
            raise ValueError(f'{len(points)} points but {len(colors)} colours')
        fields += [('red', 'u1'), ('green', 'u1'), ('blue', 'u1')]
        header += ['property uchar red', 'property uchar green', 'property uchar blue']
    vertices = np.empty(len(points), dtype=fields)
    for axis, name in enumerate('xyz'):
        vertices[name] = points[:, axis]
    if colors is not None:
        for channel, name in enumerate(('red', 'green', 'blue')):
            vertices[name] = colors[:, channel].astype(np.uint8)
    from sapiens2.utils.atomic_save import atomic_write_bytes  # here: sapiens2.utils loads without MMEngine
    atomic_write_bytes(path, ('\n'.join(header + ['end_header']) + '\n').encode('ascii') + vertices.tobytes())
    return path


def read_ply(path: str) -> dict:
    """Read a PLY file written by :func:`write_ply`: {'points': (N, 3) float32, 'colors': (N, 3) uint8 or None}."""
    with open(path, 'rb') as f:
        header = []
        while not header or header[-1] != 'end_header':
            header.append(f.readline().decode('ascii').strip())
        body = f.read()
    if header[1] != 'format binary_little_endian 1.0':
        raise ValueError(f'{path}: only binary little-endian PLY is supported, got "{header[1]}"')
    count = int(next(line.split()[-1] for line in header if line.startswith('element vertex')))
    names = [line.split()[-1] for line in header if line.startswith('property')]
    fields = [(n, '<f4' if n in 'xyz' else 'u1') for n in names]
    vertices = np.frombuffer(body, dtype=fields, count=count)
    points = np.stack([vertices[n] for n in 'xyz'], axis=-1)
    colors = np.stack([vertices[n] for n in ('red', 'green', 'blue')], -1) if 'red' in names else None
    return dict(points=points, colors=colors)
