"""A new output format is one entry of OUTPUT_FORMATS: the writer plans (checks, lists) its paths and writes its files
from that entry, with no other change."""
import os.path as osp

import cv2
import numpy as np
import pytest

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.apis.io.output_formats import OUTPUT_FORMATS, OutputFormat
from sapiens2.apis.io.output_guard import MANIFEST_NAME
from sapiens2.apis.io.sources import collect_sources
from sapiens2.apis.io.writer import ResultWriter
from sapiens2.apis.tasks.base import BaseInferenceTask
from sapiens2.utils.atomic_save import atomic_write_text, read_file_list


class GreyTask(BaseInferenceTask):
    """Predicts each image's mean grey level; draws the image itself."""
    name = 'grey'

    def __init__(self) -> None:  # the writer needs no model or pipeline
        pass

    def predict(self, images, **kwargs):
        return [dict(grey=float(image.mean())) for image in images]

    def visualize(self, image, result, context=None):
        return image


def size_paths(task_dir, task, source):
    return [] if source.kind == 'video' else [osp.join(task_dir, source.name + '_size.txt')]


def write_size(writer, frame):
    path = writer.claim(osp.join(frame.task_dir, frame.name + '_size.txt'), frame.name)
    height, width = frame.image.shape[:2]
    atomic_write_text(writer.guard.check(path), f'{width}x{height}')
    return [path]


@pytest.fixture
def size_format():
    """The toy format, added to the table for one test."""
    entry = OutputFormat('image sizes', 'save_pred', size_paths, write_size)
    OUTPUT_FORMATS.append(entry)
    yield entry
    OUTPUT_FORMATS.remove(entry)


@pytest.fixture
def photos(tmp_path):
    (tmp_path / 'in').mkdir()
    cv2.imwrite(str(tmp_path / 'in' / 'a.png'), np.full((6, 8, 3), 10, np.uint8))
    cv2.imwrite(str(tmp_path / 'in' / 'b.png'), np.full((4, 12, 3), 20, np.uint8))
    return collect_sources(str(tmp_path / 'in'))


def run(writer, sources):
    writer.check_outputs(sources)
    for source in sources:
        for index, image in source.frames():
            writer.add(source, index, image, {'grey': dict(grey=float(image.mean()))})
        writer.end_source(source)
    return writer.close()


def test_a_new_format_is_planned_and_written(tmp_path, photos, size_format):
    out = tmp_path / 'out'
    writer = ResultWriter(str(out), [GreyTask()])
    writer.check_outputs(photos)
    assert {'grey/a_size.txt', 'grey/b_size.txt'} <= read_file_list(out / MANIFEST_NAME)  # planned before writing
    assert not (out / 'grey' / 'a_size.txt').exists()
    written = run(writer, photos)
    assert sorted(osp.relpath(path, out / 'grey') for path in written) == ['a.png', 'a_size.txt', 'b.png',
                                                                           'b_size.txt']
    assert (out / 'grey' / 'a_size.txt').read_text() == '8x6' and (out / 'grey' / 'b_size.txt').read_text() == '12x4'


def test_a_new_formats_path_is_refused_before_anything_is_written(tmp_path, photos, size_format):
    (tmp_path / 'out' / 'grey').mkdir(parents=True)
    (tmp_path / 'out' / 'grey' / 'b_size.txt').write_text('not written by sapiens2')
    with pytest.raises(FileExistsError, match='b_size.txt already exists and was not written by sapiens2'):
        run(ResultWriter(str(tmp_path / 'out'), [GreyTask()]), photos)
    assert sorted(p.name for p in (tmp_path / 'out' / 'grey').iterdir()) == ['b_size.txt']


def test_a_new_format_follows_its_switch_through_the_inferencer(tmp_path, photos, size_format):
    inferencer = Sapiens2Inferencer.from_tasks([GreyTask()])
    inferencer(photos, out_dir=str(tmp_path / 'all'), show_progress=False)
    inferencer(photos, out_dir=str(tmp_path / 'pictures'), save_pred=False, show_progress=False)
    assert sorted(p.name for p in (tmp_path / 'all' / 'grey').iterdir()) == ['a.png', 'a_size.txt', 'b.png',
                                                                            'b_size.txt']
    assert sorted(p.name for p in (tmp_path / 'pictures' / 'grey').iterdir()) == ['a.png', 'b.png']


def test_a_format_names_a_known_switch():
    with pytest.raises(ValueError, match="unknown switch 'save_txt'"):
        OutputFormat('texts', 'save_txt', size_paths, write_size)
