"""The merged, training-ready outputs of a labelling job, from the per-item files of every rank.

Written into the output folder, from the ledgers (:mod:`.ledger`) and the items' JSON records, in item order (so a
resumed job merges to the same files as an uninterrupted one):

* ``index.jsonl``: one line per item (``item``, ``status``, ``path``(, ``reason``)) and ``failures.jsonl``: the
  failed ones, each with its reason;
* ``pose/coco_results.json``: COCO results (``COCO.loadRes``) of every person of every image and video frame;
* ``pose/coco_keypoints.json``: a COCO keypoint annotation file of the image items (videos have no image files to
  train on), in the layout the pose JSON was written in (the model's own, or ``--keypoint-format``): a keypoint
  scoring at least the run's ``--kpt-thr`` is visible (v=2), others are v=0 at (0, 0); ``file_name`` is the image's
  absolute path, so a config's ``data_prefix=dict(img='')`` reads them (docs/inference.md: labelling a dataset);
* ``people/coco_results.json``: the people records of ``--people`` (masks as RLE) as COCO results.
"""
import json
import os.path as osp
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text

from ..io.output_formats import JSON_LINES_SUFFIX
from ..io.output_guard import OutputGuard
from ..people.coco_results import coco_results, image_ids
from .ledger import DONE, FAILED, read_ledgers
from .settings import SETTINGS_NAME

JOB_FOLDER = '.sapiens2_job'
INDEX_NAME, FAILURES_NAME = 'index.jsonl', 'failures.jsonl'
COCO_RESULTS_NAME, COCO_KEYPOINTS_NAME = 'coco_results.json', 'coco_keypoints.json'


def job_folder(out_dir: str) -> str:
    """Where a labelling job keeps its settings and ledgers: ``<out>/.sapiens2_job``."""
    return osp.join(out_dir, JOB_FOLDER)


def read_job_settings(out_dir: str) -> dict:
    path = osp.join(job_folder(out_dir), SETTINGS_NAME)
    if not osp.exists(path):
        raise FileNotFoundError(f'{out_dir} holds no labelling job ({path} is missing): --merge takes the --out '
                                'folder of a sapiens2-infer run with --launcher')
    return strict_json.load_file(path, 'run the job again with --overwrite to label everything anew')


def merge_outputs(out_dir: str, overwrite: bool = False) -> Dict[str, int]:
    """Write the merged files of the job in ``out_dir`` (see the module docstring); returns the item counts by
    status (``done``, ``failed``)."""
    settings = read_job_settings(out_dir)
    entries = read_ledgers(job_folder(out_dir))
    items = [entries[name] for name in sorted(entries)]
    guard = OutputGuard(out_dir, overwrite=overwrite)
    written = []

    def write(path: str, text: str) -> None:
        atomic_write_text(guard.check(path), text)
        written.append(path)

    write(osp.join(out_dir, INDEX_NAME), ''.join(strict_json.dumps(entry) + '\n' for entry in items))
    write(osp.join(out_dir, FAILURES_NAME),
          ''.join(strict_json.dumps(entry) + '\n' for entry in items if entry['status'] == FAILED))
    done = [entry for entry in items if entry['status'] == DONE]
    if settings.get('save_pred', True):
        for task in ('pose', 'people'):
            if not osp.isdir(osp.join(out_dir, task)):
                continue
            frames = list(_frame_records(osp.join(out_dir, task), done))
            ids = image_ids([record['image_name'] for _, record, _ in frames], {})
            results = coco_results([dict(image_name=record['image_name'], result=_as_people(record['instances']))
                                    for _, record, _ in frames], ids)
            write(osp.join(out_dir, task, COCO_RESULTS_NAME), strict_json.dumps(results))
            if task == 'pose':
                annotations = keypoint_annotations(frames, ids)
                write(osp.join(out_dir, task, COCO_KEYPOINTS_NAME), strict_json.dumps(annotations))
    guard.record(written)
    return dict(done=len(done), failed=sum(entry['status'] == FAILED for entry in items))


def _frame_records(task_dir: str, done: List[dict]) -> Iterator[Tuple[dict, dict, dict]]:
    """``(ledger entry, frame record, header)`` of every frame of the done items, from ``<task>/<item>.json`` (an
    image) or ``<task>/<item>_predictions.jsonl`` (a video)."""
    for entry in done:
        image = osp.join(task_dir, entry['item'] + '.json')
        lines = osp.join(task_dir, entry['item'] + JSON_LINES_SUFFIX)
        if osp.exists(image):
            with open(image) as f:
                record = json.load(f)
            yield entry, record, record
        elif osp.exists(lines):
            with open(lines) as f:
                header, *frames = [json.loads(line) for line in f if line.strip()]
            for frame in frames:
                yield entry, frame, header
        else:
            raise FileNotFoundError(f'{image} is missing, but the ledger records {entry["item"]} as done: the '
                                    'outputs were moved or deleted; run again with --overwrite to label anew')


def _as_people(instances: List[dict]) -> dict:
    """Instances of a pose or people JSON record in the form :func:`coco_results` reads."""
    people = dict(records=[{key: person[key] for key in ('mask', 'area') if key in person} for person in instances],
                  bboxes=[person['bbox'] for person in instances],
                  bbox_scores=[person['bbox_score'] for person in instances])
    if instances and 'keypoints' in instances[0]:
        people.update(keypoints=np.asarray([person['keypoints'] for person in instances], np.float64),
                      keypoint_scores=np.asarray([person['keypoint_scores'] for person in instances], np.float64))
    return people


def keypoint_annotations(frames: List[Tuple[dict, dict, dict]], ids: Dict[str, int]) -> dict:
    """A COCO keypoint annotation file (images, annotations, categories) of the image items of ``frames``."""
    images, annotations = [], []
    names: Optional[List[str]] = None
    for entry, record, header in frames:
        if record is not header or not entry.get('path'):  # a video frame: no image file to train on
            continue
        names = names or header.get('keypoint_names')
        thr = float(header.get('kpt_thr_used', 0.3))
        number = ids[record['image_name']]
        width, height = record['image_size']
        images.append(dict(id=number, file_name=osp.abspath(entry['path']), width=width, height=height))
        for person in record['instances']:
            points = np.asarray(person['keypoints'], np.float64).reshape(-1, 2)
            visible = np.asarray(person['keypoint_scores'], np.float64) >= thr
            flat = np.concatenate([np.where(visible[:, None], points, 0.0), 2.0 * visible[:, None]], 1)
            x1, y1, x2, y2 = person['bbox'][:4]
            annotations.append(dict(id=len(annotations) + 1, image_id=number, category_id=1, iscrowd=0,
                                    bbox=[x1, y1, round(x2 - x1, 2), round(y2 - y1, 2)],
                                    area=round((x2 - x1) * (y2 - y1), 2), score=person['bbox_score'],
                                    num_keypoints=int(visible.sum()),
                                    keypoints=[round(float(v), 2) for v in flat.reshape(-1)]))
    category = dict(id=1, name='person', supercategory='person', keypoints=names or [], skeleton=[])
    return dict(info=dict(description='labels written by sapiens2-infer'), images=images,
                annotations=annotations, categories=[category])
