"""ResultWriter: outputs follow the unique input names, mirror sub-folders, and never overwrite each other."""
import json
import os.path as osp

import cv2
import numpy as np
import pytest

from sapiens2.apis.io.sources import Source, collect_sources
from sapiens2.apis.io.writer import ResultWriter
from sapiens2.apis.tasks.base import BaseInferenceTask


class MeanTask(BaseInferenceTask):
    """Writes each image's mean colour (raw) and the image itself (picture)."""
    name = 'mean'

    def __init__(self) -> None:  # the writer needs no model or pipeline
        pass

    def visualize(self, image, result, context=None):
        return image

    def save(self, image, result, out_dir, stem, context=None):
        path = self.out_path(out_dir, stem, '_mean.npy')
        np.save(path, result['mean'])
        return [path]


def write_all(writer, sources, task):
    """Give ``writer`` every frame of ``sources`` with the result ``task``: the frame's mean colour; close it."""
    for source in sources:
        for index, image in source.frames():
            writer.add(source, index, image, {task: dict(mean=image.reshape(-1, 3).mean(0))})
        writer.end_source(source)
    return writer.close()


def run(sources, out_dir, write_ahead=0):
    return write_all(ResultWriter(str(out_dir), [MeanTask()], write_ahead=write_ahead), sources, 'mean')


def test_same_stems_from_two_folders_and_two_formats_keep_distinct_outputs(tmp_path):
    values = {'x/a.png': 10, 'x/a.jpg': 20, 'y/a.png': 30, 'y/sub/a.png': 40}
    for relative, value in values.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(tmp_path / relative), np.full((6, 8, 3), value, np.uint8))
    sources = collect_sources([str(tmp_path / 'x'), str(tmp_path / 'y')], recursive=True)
    written = run(sources, tmp_path / 'out')
    out = tmp_path / 'out' / 'mean'
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob('*') if p.is_file()) == [
        'a.png', 'a_2.png', 'a_2_mean.npy', 'a_3.png', 'a_3_mean.npy', 'a_mean.npy', 'sub/a.png', 'sub/a_mean.npy']
    assert len(written) == 8
    by_source = {s.path[len(str(tmp_path)) + 1:]: s.name for s in sources}
    for relative, value in values.items():
        mean = np.load(out / f'{by_source[relative]}_mean.npy')
        assert abs(mean[0] - value) <= 1, relative  # each output holds its own input's result


def two_frame_clip(folder) -> str:
    """Write ``walk.mp4`` in ``folder``: two 8x16 frames, grey levels 0 and 100."""
    clip = str(folder / 'walk.mp4')
    writer = cv2.VideoWriter(clip, cv2.VideoWriter_fourcc(*'mp4v'), 5, (16, 8))
    for i in range(2):
        writer.write(np.full((8, 16, 3), 100 * i, np.uint8))
    writer.release()
    return clip


def test_video_frames_go_to_their_own_folder(tmp_path):
    clip = two_frame_clip(tmp_path)
    run(collect_sources(clip), tmp_path / 'out')
    out = tmp_path / 'out' / 'mean'
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob('*') if p.is_file()) == [
        'walk.mp4', 'walk/walk_000000_mean.npy', 'walk/walk_000001_mean.npy']


def test_a_name_claimed_twice_is_refused_before_writing(tmp_path):
    first, second = (tmp_path / 'one.png'), (tmp_path / 'two.png')
    cv2.imwrite(str(first), np.full((4, 4, 3), 1, np.uint8))
    cv2.imwrite(str(second), np.full((4, 4, 3), 2, np.uint8))
    clash = [Source('image', 'same', 'images', path=str(first)), Source('image', 'Same', 'images', path=str(second))]
    with pytest.raises(ValueError, match='would both write'):
        run(clash, tmp_path / 'out')
    assert np.load(tmp_path / 'out' / 'mean' / 'same_mean.npy')[0] == 1  # the first result was not overwritten


def test_background_writing_gives_the_same_files_and_raises_a_failed_write(tmp_path):
    for i in range(5):
        cv2.imwrite(str(tmp_path / f'{i}.png'), np.full((6, 8, 3), 40 * i, np.uint8))
    sources = collect_sources(str(tmp_path))
    direct = run(sources, tmp_path / 'direct')
    queued = run(sources, tmp_path / 'queued', write_ahead=2)
    assert [osp.relpath(p, tmp_path / 'queued') for p in queued] == [
        osp.relpath(p, tmp_path / 'direct') for p in direct]
    for path in direct:
        if path.endswith('.npy'):
            assert np.array_equal(np.load(path), np.load(path.replace('direct', 'queued')))

    class FailingTask(MeanTask):
        def visualize(self, image, result, context=None):
            if image[0, 0, 0] == 80:
                raise OSError('disk full')
            return image

    writer = ResultWriter(str(tmp_path / 'failing'), [FailingTask()], write_ahead=1)
    with pytest.raises(OSError, match='disk full'):
        for source in sources:
            for index, image in source.frames():
                writer.add(source, index, image, {'mean': dict(mean=image.reshape(-1, 3).mean(0))})
        writer.close()
    drawn = sorted(p.name for p in (tmp_path / 'failing' / 'mean').glob('*.png'))
    assert drawn == ['0.png', '1.png']  # frames queued after the failed one are not written


class RecordTask(BaseInferenceTask):
    """A task with JSON records (as pose) and an index (as the people's COCO results), no raw files."""
    name = 'record'
    index_files = ('index.json', )

    def __init__(self) -> None:
        pass

    def header(self, image_size):
        return dict(image_size=image_size, units='grey levels')

    def frame_record(self, record):
        return dict(image_name=record['image_name'], image_size=record['image_size'],
                    mean=round(float(record['result']['mean'][0])))

    def update_index(self, records, out_dir):
        path = self.out_path(out_dir, 'index', '.json')
        names = json.loads(open(path).read()) if osp.exists(path) else []
        with open(path, 'w') as f:
            json.dump(sorted(set(names) | {r['image_name'] for r in records}), f)
        return [path]


def run_records(sources, out_dir):
    writer = ResultWriter(str(out_dir), [RecordTask()], save_vis=False)
    writer.check_outputs(sources)
    return write_all(writer, sources, 'record')


def test_a_second_run_with_another_photo_keeps_the_first_photos_record(tmp_path):
    for name, value in (('first', 10), ('second', 20)):
        cv2.imwrite(str(tmp_path / f'{name}.png'), np.full((6, 8, 3), value, np.uint8))
    out = tmp_path / 'out'
    run_records(collect_sources(str(tmp_path / 'first.png')), out)
    run_records(collect_sources(str(tmp_path / 'second.png')), out)
    records = {p.name: json.loads(p.read_text()) for p in (out / 'record').glob('*.json')}
    assert records['first.json'] == dict(image_size=[8, 6], units='grey levels', image_name='first', mean=10)
    assert records['second.json']['mean'] == 20
    assert records['index.json'] == ['first', 'second']  # the index gains the second run's image


def test_a_video_keeps_its_json_lines_with_the_header_first(tmp_path):
    clip = two_frame_clip(tmp_path)
    run_records(collect_sources(clip), tmp_path / 'out')
    assert sorted(p.name for p in (tmp_path / 'out' / 'record').iterdir()) == ['walk_predictions.jsonl']
    header, *frames = map(json.loads, (tmp_path / 'out' / 'record' / 'walk_predictions.jsonl').read_text().splitlines())
    assert list(header) == ['video', 'image_size', 'units'] and header['video'] == 'walk'
    assert [frame['image_name'] for frame in frames] == ['walk_000000', 'walk_000001']


def test_an_input_named_like_an_index_is_refused_before_writing(tmp_path):
    cv2.imwrite(str(tmp_path / 'index.png'), np.full((4, 4, 3), 1, np.uint8))
    with pytest.raises(ValueError, match=r'two outputs of this run are named .*/record/index.json'):
        run_records(collect_sources(str(tmp_path / 'index.png')), tmp_path / 'out')
    assert not list((tmp_path / 'out' / 'record').iterdir())


class NaNRecordTask(RecordTask):
    """Records holding values that are not numbers (a 3D keypoint where the pointmap is invalid)."""

    def frame_record(self, record):
        return dict(image_name=record['image_name'], point=[float('nan'), np.float32('inf'), 1.5])


def test_json_records_and_json_lines_write_nan_as_null(tmp_path):
    cv2.imwrite(str(tmp_path / 'photo.png'), np.zeros((6, 8, 3), np.uint8))
    sources = collect_sources([str(tmp_path / 'photo.png'), two_frame_clip(tmp_path)])
    writer = ResultWriter(str(tmp_path / 'out'), [NaNRecordTask()], save_vis=False)
    writer.check_outputs(sources)
    write_all(writer, sources, 'record')
    strict = dict(parse_constant=lambda token: pytest.fail(f'bare {token}'))
    assert json.loads((tmp_path / 'out/record/photo.json').read_text(), **strict)['point'] == [None, None, 1.5]
    lines = (tmp_path / 'out/record/walk_predictions.jsonl').read_text().splitlines()
    assert [json.loads(line, **strict).get('point') for line in lines] == [None, [None, None, 1.5], [None, None, 1.5]]


class PartsTask(MeanTask):
    """Raw files whose number the result decides (as the per-person crops): ``<stem>_part<k>.png``."""
    name = 'parts'
    raw_patterns = ((r'_part\d+\.png', '_part0.png'), )

    def save(self, image, result, out_dir, stem, context=None):
        paths = [self.out_path(out_dir, stem, f'_part{k}.png') for k in range(2)]
        for path in paths:
            cv2.imwrite(path, image)
        return paths


def test_an_input_named_like_another_inputs_numbered_files_is_refused_before_anything_is_written(tmp_path):
    for name in ('a', 'a_part1'):
        cv2.imwrite(str(tmp_path / f'{name}.png'), np.zeros((6, 8, 3), np.uint8))
    writer = ResultWriter(str(tmp_path / 'out'), [PartsTask()])
    with pytest.raises(ValueError, match=rf'^two outputs of this run are named {tmp_path}/out/parts/a_part1\.png: the '
                       rf'parts raw files of input a \({tmp_path}/a\.png\) and the parts pictures of input a_part1 '):
        writer.check_outputs(collect_sources(str(tmp_path)))
    assert not [p for p in (tmp_path / 'out').rglob('*') if p.is_file()]


def test_a_file_the_plan_did_not_foresee_is_refused_before_it_is_written(tmp_path):
    class Unplanned(PartsTask):
        raw_patterns = ()

    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((6, 8, 3), np.uint8))
    sources = collect_sources(str(tmp_path / 'a.png'))
    writer = ResultWriter(str(tmp_path / 'out'), [Unplanned()])
    writer.check_outputs(sources)
    with pytest.raises(ValueError, match=r'a_part0\.png is not an output this run planned'):
        write_all(writer, sources, 'parts')
    assert not (tmp_path / 'out/parts/a_part0.png').exists()
