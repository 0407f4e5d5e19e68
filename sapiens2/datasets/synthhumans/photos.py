"""Real photographs as SynthHumans backgrounds: scene photos that installed packages ship, or a folder of your own,
cropped, scaled, flipped and colour-jittered into as many distinct backgrounds as there are seeds.

No photo is copied into this repository: :data:`PACKAGE_PHOTOS` names the files inside installed packages that were
looked at and hold **no person** (a person in a background would be an unlabelled person in the training data), with
where they come from. Photos of a folder you pass are used as they are: keep people out of them yourself.
"""
import hashlib
import importlib.util
import os
import os.path as osp
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import cv2
import numpy as np

PHOTO_SUFFIXES = ('.jpg', '.jpeg', '.png', '.bmp', '.webp')
MAX_SIDE = 1024  # photos are read at most this large (longer side), which every crop then shrinks from


@dataclass(frozen=True)
class PackagePhoto:
    """A scene photo inside an installed package (``path`` relative to the package folder), without people."""
    package: str
    path: str
    content: str
    licence: str


# Checked by eye, each one, for people (none may show one). Rejected, because they show a person: scikit-image's
# astronaut.png and camera.png, matplotlib's grace_hopper.jpg; because they are no scene photo: the charts,
# clip art, logos and microscopy/medical images of scikit-image and matplotlib, and scikit-image's
# motorcycle_right.png (the stereo partner of motorcycle_left.png).
PACKAGE_PHOTOS = (
    PackagePhoto('skimage', 'data/brick.png', 'a brick wall (grey)', 'CC0 (CC0Textures Bricks25)'),
    PackagePhoto('skimage', 'data/grass.png', 'grass (grey)', 'CC0 (DeviantArt linolafett, Grass 01)'),
    PackagePhoto('skimage', 'data/gravel.png', 'gravel (grey)', 'CC0 (CC0Textures Gravel04)'),
    PackagePhoto('skimage', 'data/coffee.png', 'a cup of coffee on a wooden table', 'CC0 (Rachel Michetti)'),
    PackagePhoto('skimage', 'data/chelsea.png', 'a cat, close up', 'CC0 (Stefan van der Walt)'),
    PackagePhoto('skimage', 'data/rocket.jpg', 'a rocket on its launch pad at dusk', 'public domain (SpaceX)'),
    PackagePhoto('skimage', 'data/motorcycle_left.png', 'a motorcycle in a garage with shelves and boxes',
                 'Middlebury 2014 stereo data set (Scharstein et al.), as scikit-image ships it'),
    PackagePhoto('skimage', 'data/coins.png', 'coins on a tray (grey)', 'no known copyright restrictions '
                 '(Brooklyn Museum)'),
    PackagePhoto('skimage', 'data/moon.png', 'the surface of the moon (grey)', 'no known copyright restrictions'),
    PackagePhoto('skimage', 'data/text.png', 'handwriting on a surface (grey)', 'public domain (Wikipedia '
                 'Corner.png)'),
    PackagePhoto('skimage', 'data/page.png', 'a printed page (grey)', 'scikit-image documentation'),
    PackagePhoto('skimage', 'data/hubble_deep_field.jpg', 'the Hubble deep field', 'public domain (NASA)'),
    PackagePhoto('sklearn', 'datasets/images/china.jpg', 'a pagoda over trees and a lake', 'CC BY 2.0 '
                 '(danielbuechele, Flickr)'),
    PackagePhoto('sklearn', 'datasets/images/flower.jpg', 'a dahlia over dark leaves', 'CC BY 2.0 (vultilion, '
                 'Flickr)'),
)
PACKAGE_NAMES = {'skimage': 'scikit-image', 'sklearn': 'scikit-learn'}


class PhotoBackgroundError(ValueError):
    """Real-photo backgrounds were asked for, but no photo can be read."""


def package_folder(package: str):
    """The folder of an installed package, found without importing it; None when it is not installed."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return locations[0] if locations else None


def package_photo_paths() -> Tuple[str, ...]:
    """The files of :data:`PACKAGE_PHOTOS` present in the installed packages."""
    paths = []
    for photo in PACKAGE_PHOTOS:
        folder = package_folder(photo.package)
        if folder is not None and osp.isfile(osp.join(folder, photo.path)):
            paths.append(osp.join(folder, photo.path))
    return tuple(paths)


def folder_photo_paths(folder: str) -> Tuple[str, ...]:
    """The image files directly inside ``folder``, sorted by name."""
    if not osp.isdir(folder):
        raise PhotoBackgroundError(f'background photo folder {folder} does not exist or is not a folder; pass a '
                                   'folder of scene photos without people')
    return tuple(osp.join(folder, name) for name in sorted(os.listdir(folder))
                 if name.lower().endswith(PHOTO_SUFFIXES) and osp.isfile(osp.join(folder, name)))


def photo_paths(folder: Optional[str] = None) -> Tuple[str, ...]:
    """The photos of ``folder`` when given, else the package photos; a :class:`PhotoBackgroundError` when none."""
    paths = folder_photo_paths(folder) if folder else package_photo_paths()
    if not paths:
        where = f'{folder} holds no image ({", ".join(PHOTO_SUFFIXES)})' if folder else \
            'none of the packages that ship scene photos is installed (' + \
            ', '.join(sorted(set(PACKAGE_NAMES.values()))) + ')'
        raise PhotoBackgroundError(f'real-photo backgrounds need photos, but {where}: pip install scikit-image, or '
                                   'pass a folder of scene photos without people (--background-photos DIR)')
    return paths


def load_photos(paths: Tuple[str, ...]) -> Tuple[np.ndarray, ...]:
    """The photos as BGR uint8, the longer side shrunk to at most :data:`MAX_SIDE`."""
    photos = []
    for path in paths:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None or min(image.shape[:2]) < 16:
            raise PhotoBackgroundError(f'background photo {path} cannot be read as an image of at least 16x16 '
                                       'pixels; remove it from the folder')
        scale = MAX_SIDE / max(image.shape[:2])
        if scale < 1:
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        photos.append(image)
    return tuple(photos)


def photos_digest(paths: Sequence[str]) -> str:
    """SHA-256 over the names and bytes of the photos: a set made from other photos is another configuration."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, 'rb') as f:
            digest.update(osp.basename(path).encode() + b'\0' + hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def uses_photo(background_seed: int, ratio: float) -> bool:
    """Whether the scene with this background seed gets a photo (a share ``ratio`` of the scenes) or its room."""
    return ratio > 0 and np.random.default_rng([background_seed, 2]).random() < ratio


def background_for(scene, photos: Sequence[np.ndarray], ratio: float) -> Optional[np.ndarray]:
    """The photo background of a :class:`.scene.Scene` when it gets one (:func:`uses_photo`), else None (its
    room), for :func:`.render.render_scene`."""
    if not photos or not uses_photo(scene.background_seed, ratio):
        return None
    return photo_background(photos, scene.background_seed, scene.camera.size, scene.background_flip)


def photo_background(photos: Sequence[np.ndarray], seed: int, size: Tuple[int, int],
                     flip: bool = False) -> np.ndarray:
    """A BGR uint8 background of ``size = (H, W)`` cut from one of ``photos``, deterministic in ``seed``.

    A crop of the image's aspect ratio 25-100 % as wide as the widest one that fits, anywhere in the photo, scaled
    to ``size``, mirrored half of the time; then brightness, contrast, saturation and per-channel gains jittered.
    ``flip`` mirrors the result (as :func:`.background.render_background` does for mirrored scenes).
    """
    rng = np.random.default_rng([seed, 3])
    photo = photos[int(rng.integers(len(photos)))]
    height, width = size
    ph, pw = photo.shape[:2]
    fit = min(ph / height, pw / width)
    scale = fit * rng.uniform(0.25, 1.0)
    ch, cw = max(1, min(ph, int(round(height * scale)))), max(1, min(pw, int(round(width * scale))))
    y0, x0 = int(rng.integers(ph - ch + 1)), int(rng.integers(pw - cw + 1))
    crop = photo[y0:y0 + ch, x0:x0 + cw]
    interpolation = cv2.INTER_AREA if ch >= height else cv2.INTER_LINEAR
    image = cv2.resize(crop, (width, height), interpolation=interpolation).astype(np.float32)
    if rng.random() < 0.5:
        image = image[:, ::-1]
    grey = image.mean(axis=2, keepdims=True)
    image = grey + (image - grey) * np.float32(rng.uniform(0.5, 1.3))  # saturation
    mean = np.float32(image.mean())
    image = mean + (image - mean) * np.float32(rng.uniform(0.7, 1.3))  # contrast
    image = image * np.float32(rng.uniform(0.6, 1.3)) * rng.uniform(0.9, 1.1, 3).astype(np.float32)  # brightness
    out = np.clip(np.round(image), 0, 255).astype(np.uint8)
    return out[:, ::-1].copy() if flip else np.ascontiguousarray(out)
