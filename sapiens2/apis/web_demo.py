"""``sapiens2 web``: a Gradio page to run the task models on an uploaded photo or video, in the browser.

Upload a photo or a video, choose models (the shipped tiny models, and the released ones whose checkpoint is on this
machine), see the pictures and download the raw results (JSON, NPY...). It works with no network: no analytics, no
version check, no external fonts or scripts, and only the checkpoints already here. Gradio is an optional extra
(``pip install 'sapiens2[web]'``; docs/install.md) imported by :func:`serve` alone.
"""
import json
import os
import os.path as osp
import shutil
import signal
import tempfile
import time
import zipfile
from typing import Dict, List, Optional, Sequence, Tuple

from sapiens2.hub.download import cached_hub_file
from sapiens2.hub.model_zoo import ModelZooEntry, find_local_checkpoint, get_entry, runnable_entries
from sapiens2.utils.atomic_save import AtomicOutput
from sapiens2.utils.devices import AUTO

#: Shown in the browser for a video result: OpenCV's MP4 (mp4v) does not play there, WebM (VP8) does.
BROWSER_VIDEO_SUFFIX = '.webm'
MAX_CACHED_INFERENCERS = 2
#: The largest upload the page accepts (Gradio refuses a larger one before storing it); ``sapiens2 web
#: --max-upload-mb`` changes it.
MAX_UPLOAD_MB = 100
#: The errors of a run that are the user's (an unreadable upload, no model chosen): shown in the page, no traceback.
USER_ERRORS = (OSError, ValueError, KeyError)
#: The tasks that, with pose, give people their masks or 3D keypoints (:class:`sapiens2.apis.people.PeopleComposer`).
PEOPLE_TASKS = ('seg', 'matting', 'pointmap')
#: The keypoint threshold the page starts with (the CLI's ``--kpt-thr`` default).
DEFAULT_KPT_THR = 0.3


def checkpoint_on_this_machine(entry: ModelZooEntry) -> bool:
    """Whether ``entry`` runs without a download: shipped in the package, under the checkpoint root, or in the Hub
    cache."""
    if entry.packaged:
        return osp.isfile(entry.packaged_path())
    return (find_local_checkpoint(entry) is not None
            or cached_hub_file(entry.repo, entry.files, entry.revision) is not None)


def offered_models() -> Tuple[List[str], List[str]]:
    """The aliases the page offers: (shipped with the package, released and on this machine), each sorted."""
    shipped, cached = [], []
    for entry in runnable_entries():
        if checkpoint_on_this_machine(entry):
            (shipped if entry.packaged else cached).append(entry.alias)
    return shipped, cached


def people_offered(models: Sequence[str]) -> bool:
    """Whether the chosen ``models`` (aliases) compose into people: pose and one of :data:`PEOPLE_TASKS`."""
    chosen = {getattr(get_entry(alias), 'task', None) or alias.split('-')[0] for alias in models}
    return 'pose' in chosen and bool(chosen.intersection(PEOPLE_TASKS))


def people_option(models: Sequence[str]) -> dict:
    """The page's "people" checkbox for the chosen ``models``: shown when they compose into people, else hidden and
    cleared (arguments of ``gradio.update``)."""
    return dict(visible=True) if people_offered(models) else dict(visible=False, value=False)


def split_outputs(out_dir: str, name: str) -> Tuple[List[str], List[str]]:
    """The files an inferencer wrote under ``out_dir`` for the input named ``name``: (pictures, raw results).

    A picture is ``<task>/<name>.png`` (a photo) or ``<task>/<name>.mp4`` (a video); everything else is a raw result.
    """
    pictures, raw = [], []
    for task in sorted(os.listdir(out_dir)):
        for folder, _, files in sorted(os.walk(osp.join(out_dir, task))):
            for file in sorted(files):
                path = osp.join(folder, file)
                is_picture = folder == osp.join(out_dir, task) and file in (f'{name}.png', f'{name}.mp4')
                (pictures if is_picture else raw).append(path)
    return pictures, raw


def pose_status(out_dir: str, name: str, kpt_thr: float) -> str:
    """What the pose picture of the photo ``name`` shows, from its JSON: people drawn, or why none is (the person
    finder found nobody, or no keypoint scored above ``kpt_thr``). Empty for a video or a run without pose."""
    path = osp.join(out_dir, 'pose', f'{name}.json')
    if not osp.isfile(path):
        return ''
    with open(path) as f:
        instances = json.load(f).get('instances', [])
    drawn = [sum(score > kpt_thr for score in person['keypoint_scores']) for person in instances]
    if any(drawn):
        return f'pose: {sum(n > 0 for n in drawn)} person box(es), {sum(drawn)} keypoints above {kpt_thr:g}'
    if instances:
        return (f'pose: {len(instances)} person box(es) found, but no keypoint scored above the threshold '
                f'{kpt_thr:g}; lower the threshold.')
    return ('pose: no person found - the page finds people as the person regions of the shipped matting model and '
            'found none; use a photo with a person (or boxes: `sapiens2 infer --bboxes`, or `--det-config` for a '
            'person detector).')


def set_keypoint_threshold(inferencer, kpt_thr: float) -> None:
    """Draw ``inferencer``'s pose keypoints from ``kpt_thr`` on (the page's slider; no model is rebuilt)."""
    if not 0.0 <= kpt_thr <= 1.0:
        raise ValueError(f'the keypoint threshold is a score between 0 and 1, got {kpt_thr}')
    for task in inferencer.tasks:
        if hasattr(task, 'kpt_thr'):
            task.kpt_thr = float(kpt_thr)


def browser_video(path: str) -> str:
    """A WebM (VP8) copy of the video ``path`` beside it, which browsers play."""
    import cv2
    capture = cv2.VideoCapture(path)
    fps = capture.get(cv2.CAP_PROP_FPS) or 10.0
    target = osp.splitext(path)[0] + BROWSER_VIDEO_SUFFIX
    out = AtomicOutput(target)
    writer = None
    try:
        ok, frame = capture.read()
        while ok:
            if writer is None:
                height, width = frame.shape[:2]
                writer = cv2.VideoWriter(out.tmp, cv2.VideoWriter_fourcc(*'VP80'), fps, (width, height))
                if not writer.isOpened():
                    raise OSError(f'cannot write {target} (OpenCV without a VP8 encoder)')
            writer.write(frame)
            ok, frame = capture.read()
    except BaseException:
        out.discard()
        raise
    finally:
        capture.release()
        if writer is not None:
            writer.release()
    out.commit()
    return target


def download_names(paths: Sequence[str], root: str, folder: str) -> List[str]:
    """Links to ``paths`` (under ``root``) in ``folder``, named by their path relative to ``root`` with ``-`` for
    ``/`` (``normal-person.npy``), so that a downloaded file says which task it comes from."""
    os.makedirs(folder, exist_ok=True)
    links = []
    for path in paths:
        link = osp.join(folder, osp.relpath(path, root).replace(os.sep, '-'))
        os.link(path, link)  # direct write: a new name (os.link never replaces a file)
        links.append(link)
    return links


def zip_files(paths: Sequence[str], root: str, target: str) -> str:
    """``paths`` (under ``root``) in the ZIP file ``target``, by their path relative to ``root``."""
    with AtomicOutput(target) as out:
        with zipfile.ZipFile(out.tmp, 'w', zipfile.ZIP_DEFLATED) as archive:
            for path in paths:
                archive.write(path, osp.relpath(path, root))
    return target


class WebDemo:
    """The page's work: one inference run per request into a folder of its own under ``out_root``.

    Args:
        out_root: Folder for the runs' outputs (the page serves files from there).
        device: ``'cpu'``, ``'cuda'``...; default CUDA when available.
        dtype: The models' precision (default ``'auto'``: :func:`~sapiens2.utils.devices.auto_dtype`).
    """

    def __init__(self, out_root: str, device: Optional[str] = None, dtype: str = AUTO) -> None:
        self.out_root, self.device, self.dtype = out_root, device, dtype
        self._inferencers: Dict[Tuple[str, ...], object] = {}

    def inferencer(self, models: Sequence[str]):
        """A :class:`~sapiens2.apis.Sapiens2Inferencer` for ``models``, kept for the next requests."""
        from sapiens2.apis.inferencer import Sapiens2Inferencer
        key = tuple(sorted(models))
        if key not in self._inferencers:
            while len(self._inferencers) >= MAX_CACHED_INFERENCERS:
                self._inferencers.pop(next(iter(self._inferencers)))
            self._inferencers[key] = Sapiens2Inferencer(list(key), device=self.device, dtype=self.dtype)
        return self._inferencers[key]

    def run(self, path: Optional[str], models: Sequence[str], people: bool = False,
            kpt_thr: float = DEFAULT_KPT_THR) -> Tuple[List[str], List[str], str]:
        """Run ``models`` on the photo or video ``path``: (pictures to show, files to download, a status line).
        ``people``: also the people picture (instance masks, 3D skeletons) and records (:mod:`sapiens2.apis.people`).
        ``kpt_thr``: pose keypoints drawn from this score on.
        """
        if not path:
            raise ValueError('upload a photo or a video first')
        if not models:
            raise ValueError('choose at least one model')
        if people and not people_offered(models):
            raise ValueError(f'people needs a pose model and a {", ".join(PEOPLE_TASKS[:-1])} or {PEOPLE_TASKS[-1]} '
                             f'model, got {", ".join(models)}; add one of them')
        out_dir = tempfile.mkdtemp(prefix='run-', dir=self.out_root)
        inferencer = self.inferencer(models)
        set_keypoint_threshold(inferencer, kpt_thr)
        inferencer(path, out_dir=out_dir, show_progress=False, return_results=False, people=people)
        name = osp.splitext(osp.basename(path))[0]
        pictures, raw = split_outputs(out_dir, name)
        shown = [browser_video(p) if p.endswith('.mp4') else p for p in pictures]
        downloads = osp.join(out_dir, 'downloads')
        files = download_names(raw, out_dir, downloads)
        archive = zip_files(pictures + raw, out_dir, osp.join(downloads, f'{name}_results.zip'))
        what = ', '.join(models) + (' (people)' if people else '')
        dtypes = ', '.join(sorted({task.dtype for task in inferencer.tasks}))
        lines = [f'{what} on {osp.basename(path)} in {dtypes}: {len(raw)} raw result files',
                 pose_status(out_dir, name, kpt_thr)]
        return shown, [archive] + files, '\n\n'.join(line for line in lines if line)


def gradio_temp_dir(out_root: str) -> str:
    """Gradio's cache of uploads and results for a run whose outputs are under ``out_root``: inside it, so that
    removing ``out_root`` at exit removes them (Gradio's default, a shared system folder, keeps them)."""
    folder = osp.join(out_root, 'gradio')
    os.makedirs(folder, exist_ok=True)
    return folder


def import_gradio():
    """The gradio module, with analytics and its version check off; a one-line error when the extra is missing."""
    os.environ['GRADIO_ANALYTICS_ENABLED'] = 'False'
    os.environ.setdefault('HF_HUB_DISABLE_TELEMETRY', '1')
    try:
        import gradio
    except ImportError as err:
        raise ImportError(f'the web demo needs gradio ({err}): pip install "sapiens2[web]", or in a checkout '
                          '`make web-deps` and then `.venv-web/bin/sapiens2 web` (docs/install.md)') from err
    return gradio


def page_error(gr, message: str):
    """A ``gradio.Error`` the page shows as it is (Gradio's own message for other errors says only that verbose
    error reporting is off), without a traceback in the server's log."""
    try:
        return gr.Error(message, print_exception=False)
    except TypeError:  # a Gradio without print_exception
        return gr.Error(message)


def shown_errors(gr, function, what: str = ''):
    """``function`` with its :data:`USER_ERRORS` (and any error, when ``what`` names the upload it reads: Gradio's
    decoders raise anything for a file that is not a picture or a video) raised as :func:`page_error`."""
    caught = Exception if what else USER_ERRORS

    def wrapped(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except caught as err:
            if isinstance(err, gr.Error):
                raise
            message = f'the upload is not {what} this page can read ({err})' if what else str(err)
            raise page_error(gr, message) from None

    return wrapped


def build_page(demo: WebDemo):
    """The Gradio page (``gradio.Blocks``) of ``demo``."""
    gr = import_gradio()
    shipped, cached = offered_models()
    default = [alias for alias in shipped if alias.startswith('pose-')][:1] or shipped[:1]
    predict = shown_errors(gr, demo.run)

    with gr.Blocks(title='Sapiens2', analytics_enabled=False) as page:
        gr.Markdown('# Sapiens2\nUpload a photo or a video, choose models, run. The `-tiny` models ship with the '
                    'package (small, trained on synthetic people); released models appear here once their checkpoint '
                    'is on this machine (`sapiens2-infer --task pose --size 1b ...` downloads it).')
        with gr.Row():
            with gr.Column():
                models = gr.CheckboxGroup(choices=shipped + cached, value=default, label='Models', elem_id='models')
                people = gr.Checkbox(value=False, label='People: one mask and 3D skeleton per person',
                                     visible=people_offered(default), elem_id='people')
                kpt_thr = gr.Slider(0.0, 1.0, value=DEFAULT_KPT_THR, step=0.05, label='Keypoint threshold (pose)',
                                    elem_id='kpt-thr')
                with gr.Tabs():
                    with gr.Tab('Photo'):
                        photo = gr.Image(type='filepath', sources=['upload'], label='Photo', elem_id='photo')
                        photo_button = gr.Button('Run on the photo', variant='primary', elem_id='run-photo')
                    with gr.Tab('Video'):
                        video = gr.Video(sources=['upload'], label='Video', elem_id='video')
                        video_button = gr.Button('Run on the video', variant='primary', elem_id='run-video')
            with gr.Column():
                status = gr.Markdown(elem_id='status')
                gallery = gr.Gallery(label='Pictures', columns=2, object_fit='contain', height='auto',
                                     interactive=False, elem_id='pictures')
                files = gr.File(label='Raw results (a ZIP of everything, then each file)', file_count='multiple',
                                interactive=False, elem_id='results')
        for upload, what in ((photo, 'a photo'), (video, 'a video')):  # decoded by Gradio before predict runs
            upload.preprocess = shown_errors(gr, upload.preprocess, what)
        models.change(lambda chosen: gr.update(**people_option(chosen)), models, people)
        photo_button.click(predict, [photo, models, people, kpt_thr], [gallery, files, status])
        video_button.click(predict, [video, models, people, kpt_thr], [gallery, files, status])
    return page


def serve(host: str = '127.0.0.1', port: int = 7860, device: Optional[str] = None,
          max_upload_mb: float = MAX_UPLOAD_MB, dtype: str = AUTO) -> None:
    """Serve the page on ``host:port`` until Ctrl-C or SIGTERM, accepting uploads of up to ``max_upload_mb`` MiB.

    The runs' outputs and Gradio's copies of the uploads and results (its ``GRADIO_TEMP_DIR``, set to a folder of
    this run) are removed when it stops.
    """
    out_root = tempfile.mkdtemp(prefix='sapiens2-web-')
    os.environ['GRADIO_TEMP_DIR'] = gradio_temp_dir(out_root)  # before Gradio reads it
    gr = import_gradio()
    from sapiens2.registration import register_modules
    register_modules()
    for stop in (signal.SIGINT, signal.SIGTERM):  # a KeyboardInterrupt (also where a shell ignored Ctrl-C)
        signal.signal(stop, signal.default_int_handler)
    page = None
    try:
        page = build_page(WebDemo(out_root, device, dtype))
        page.queue(default_concurrency_limit=1)
        page.launch(server_name=host, server_port=port, share=False, ssr_mode=False, allowed_paths=[out_root],
                    max_file_size=int(max_upload_mb * 2 ** 20),
                    theme=gr.themes.Default(font=['ui-sans-serif', 'system-ui', 'sans-serif'],
                                            font_mono=['ui-monospace', 'monospace']),
                    footer_links=[], mcp_server=False, pwa=False, prevent_thread_lock=True)
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        print('sapiens2 web: stopped')
    finally:
        if page is not None:
            page.close()
        shutil.rmtree(out_root, ignore_errors=True)
