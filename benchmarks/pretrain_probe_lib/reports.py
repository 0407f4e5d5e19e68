"""The benchmark's tables (dense and semantic probes, the comparisons in seed std) from the cells, written
into the docs between their markers with the pictures (``--report``)."""
import glob
import os
import os.path as osp

from . import (
    BACKBONES,
    COMPARISONS,
    DIAGNOSTICS,
    FINETUNE,
    FINETUNE_MARKS,
    FINETUNE_RUNS,
    GROUP_MARKS,
    LEVERS,
    MARK_END,
    MARK_START,
    NAMES,
    REFERENCES,
    SEMANTIC_BUDGETS,
    SEMANTIC_FEATURES,
    SEMANTIC_MARKS,
    SPREAD_MARKS,
    TASK_HEAD,
    TASKS,
    Setting,
    lever_name,
)
from .cells import finetune_json, probe_json, read_json, semantic_json
from .figures import plot_health, plot_reconstruction
from .teacher import target_groups, teacher_spread


def _stats(values: list[float]) -> tuple[float, float]:
    import numpy as np
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0


def probed_backbones(args) -> list[str]:
    """The benchmark's backbones (those of the setting's ``variants`` where it names them), then the teachers of the
    lever cells that have dense probes (``--job probe:lever-<name>:0``, outside the plan)."""
    planned = ('random', *args.setting.variants, *REFERENCES) if args.setting.variants else BACKBONES
    return [b for b in BACKBONES if b in planned] + [f'lever-{name}' for name in LEVERS if any(
        osp.isfile(probe_json(args, f'lever-{name}', 0, t, b)) for t in TASKS for b in args.setting.budgets)]


def _cost_kind(backbone: str) -> str:
    """Which line of the CPU-time sum a backbone's probes go to: the plan's or the diagnostics'."""
    return 'probe' if backbone in BACKBONES and backbone not in DIAGNOSTICS else 'diagnostics'


def display_name(backbone: str) -> str:
    return NAMES.get(backbone) or f'lever cell: {lever_name(backbone[len("lever-"):])} (teacher)'


def collect(args) -> dict:
    """{(backbone, task, budget): [values over seeds]}, constants and CPU seconds from the cell files."""
    s = args.setting
    values, constants, cpu = {}, {}, dict(data=0.0, pretrain=0.0, probe=0.0, finetune=0.0, diagnostics=0.0)
    if osp.isfile(osp.join(args.results, 'data.json')):
        cpu['data'] = read_json(osp.join(args.results, 'data.json'))['cpu_s']
    for path in glob.glob(osp.join(args.results, 'pretrain', '*.json')):
        cell = read_json(path)
        cpu['diagnostics' if cell['variant'] in DIAGNOSTICS else 'pretrain'] += cell['cpu_s']
    for path in glob.glob(osp.join(args.results, 'finetune', '*.json')):
        cpu['finetune'] += read_json(path)['cpu_s']
    for backbone in probed_backbones(args):
        for task in TASKS:
            for budget in s.budgets:
                cells = [probe_json(args, backbone, seed, task, budget) for seed in s.seeds]
                cells = [read_json(p) for p in cells if osp.isfile(p)]
                if cells:
                    values[backbone, task, budget] = [c['value'] for c in cells]
                    constants[task, budget] = cells[0]['constant_baseline']
                    cpu[_cost_kind(backbone)] += sum(c['cpu_s'] for c in cells)
        for seed in planned_seeds(s, backbone):  # the semantic probes of the backbone
            if osp.isfile(semantic_json(args, backbone, seed)):
                cpu[_cost_kind(backbone)] += read_json(
                    semantic_json(args, backbone, seed))['cpu_s']
    return dict(values=values, constants=constants, cpu=cpu)


def collect_semantic(args, feature: str = 'pooled') -> dict:
    """{(backbone, property, budget, method): [accuracy per backbone seed, averaged over the label subsets]} on one
    feature, with the property ``mean`` (the mean over the properties) added."""
    import numpy as np
    values = {}
    levers = [f'lever-{name}' for name in LEVERS if osp.isfile(semantic_json(args, f'lever-{name}', 0, feature))]
    for backbone in list(BACKBONES) + levers:
        for seed in args.setting.seeds:
            path = semantic_json(args, backbone, seed, feature)
            if not osp.isfile(path):
                continue
            results = read_json(path)['results']
            for budget in SEMANTIC_BUDGETS:
                for method in ('knn', 'linear'):
                    per = {name: float(np.mean(cells[str(budget)][method])) for name, cells in results.items()}
                    for name, value in dict(per, mean=float(np.mean(list(per.values())))).items():
                        values.setdefault((backbone, name, budget, method), []).append(value)
    return values


def semantic_table(args) -> str:
    """Markdown tables of the semantic probes, one per feature that has cells: k-NN / linear accuracy (%) per
    property and labels per class, and the comparisons (``COMPARISONS``) on the mean over the properties."""
    from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES
    chance = ', '.join(f'{n} {100 / len(c):.0f} %' for n, c in PROPERTY_CLASSES.items())
    lines = ['k-NN / linear-probe accuracy (%) with 16 and 64 labels per class; mean ± std over the backbone seeds '
             f'run (each the mean of 3 label subsets). Chance: {chance}.']
    for feature, description in SEMANTIC_FEATURES.items():
        values = collect_semantic(args, feature)
        if values:
            lines += ['', f'**On the {description}**', '', _semantic_rows(values, list(PROPERTY_CLASSES) + ['mean'])]
    return '\n'.join(lines)


def _semantic_rows(values: dict, names: list[str]) -> str:
    """The accuracy table of one feature and, under it, the table of the comparisons."""
    head = ' | '.join(f'{n} @{b}' for b in SEMANTIC_BUDGETS for n in names)
    lines = [f'| backbone | {head} |', '|---|' + '---|' * (len(names) * len(SEMANTIC_BUDGETS))]
    for backbone in list(BACKBONES) + [f'lever-{name}' for name in LEVERS]:
        if (backbone, 'mean', SEMANTIC_BUDGETS[0], 'knn') not in values:
            continue
        cells = []
        for budget in SEMANTIC_BUDGETS:
            for name in names:
                parts = []
                for method in ('knn', 'linear'):
                    mean, std = _stats(values[backbone, name, budget, method])
                    parts.append(f'{100 * mean:.1f}' + (f' ± {100 * std:.1f}' if std else ''))
                cells.append(' / '.join(parts))
        lines.append(f'| {display_name(backbone)} | ' + ' | '.join(cells) + ' |')
    columns = [(budget, method) for budget in SEMANTIC_BUDGETS for method in ('knn', 'linear')]
    lines += ['', 'Differences of the mean over the properties (points; in brackets in seed std, ✓ beyond 3 std):', '',
              '| comparison | ' + ' | '.join(f'{method} @{budget}' for budget, method in columns) + ' |',
              '|---|' + '---|' * len(columns)]
    for first, other in COMPARISONS:
        cells = [_semantic_difference(values.get((first, 'mean', budget, method)),
                                      values.get((other, 'mean', budget, method))) for budget, method in columns]
        if any(cells):
            lines.append(f'| {NAMES[first]} vs {NAMES[other]} | ' + ' | '.join(c or '–' for c in cells) + ' |')
    return '\n'.join(lines)


def _seed_difference(first: list[float], other: list[float]) -> tuple[float, float]:
    """Mean of ``first`` minus mean of ``other``, and the seed std to judge it by: the larger of the two (0 unless
    both have at least two seeds)."""
    (mf, sf), (mr, sr) = _stats(first), _stats(other)
    return mf - mr, (max(sf, sr) if min(len(first), len(other)) > 1 else 0.0)


def _semantic_difference(first: list | None, other: list | None) -> str:
    """``first`` minus ``other`` in points, with its size in seed std (empty when one side is missing)."""
    if not first or not other:
        return ''
    diff, sigma = _seed_difference(first, other)
    size = f'{diff / sigma:.1f}' if sigma else 'one seed'
    return f'{100 * diff:+.1f} ({size}){" ✓" if sigma and diff > 3 * sigma else ""}'


def _fmt(task: str, value: float) -> str:
    return f'{100 * value:.1f}' if task == 'seg' else (f'{value:.2f}' if task == 'normal' else f'{value:.4f}')


def _better(task: str, a: float, b: float) -> float:
    """How much better ``a`` is than ``b`` (positive = better) in the task's direction."""
    return a - b if task == 'seg' else b - a


def verdicts(args, results: dict) -> list[dict]:
    """Full objective vs random init and vs MAE only, per task and budget: difference and its size in seed std
    (the larger of the two standard deviations; none unless both sides have at least two seeds)."""
    rows = []
    for full_name, other in COMPARISONS:
        for task in TASKS:
            for budget in args.setting.budgets:
                full = results['values'].get((full_name, task, budget))
                ref = results['values'].get((other, task, budget))
                if not full or not ref:
                    continue
                # a std needs two seeds of each: otherwise the difference is reported without a verdict
                diff, sigma = _seed_difference(full, ref)
                diff = _better(task, diff, 0.0)
                rows.append(dict(full=full_name, other=other, task=task, budget=budget, diff=diff, sigma=sigma,
                                 beyond_3_std=bool(sigma > 0 and diff > 3 * sigma), better=diff > 0))
    return rows


def planned_seeds(s: Setting, backbone: str) -> tuple:
    """The seeds a backbone is probed with in a setting (a lever cell's teacher: seed 0)."""
    if backbone in REFERENCES:
        return s.reference_seeds
    if backbone.startswith('lever-'):
        return (0, )
    return s.variant_seeds.get(backbone, s.seeds)


def table(args, results: dict) -> str:
    s = args.setting
    head = '| backbone | ' + ' | '.join(f'{TASK_HEAD[t]} @{b}' for t in TASKS for b in s.budgets) + ' |'
    lines = ['Mean ± seed std over the seeds run; "(k/n seeds)" marks a cell with fewer seeds than planned, '
             '"not run" one that has no result yet.', '', head, '|---|' + '---|' * (len(TASKS) * len(s.budgets))]
    for backbone in probed_backbones(args):
        planned = len(planned_seeds(s, backbone))
        cells = []
        for task in TASKS:
            for budget in s.budgets:
                vals = results['values'].get((backbone, task, budget))
                if not vals:
                    cells.append('not run')
                    continue
                mean, std = _stats(vals)
                spread = f' ± {100 * std:.1f}' if task == 'seg' else f' ± {_fmt(task, std)}'
                count = f' ({len(vals)}/{planned} seeds)' if len(vals) < planned else ''
                cells.append(f'{_fmt(task, mean)}{spread if len(vals) > 1 else ""}{count}')
        lines.append(f'| {display_name(backbone)} | ' + ' | '.join(cells) + ' |')
    constants = [_fmt(t, results['constants'][t, b]) if (t, b) in results['constants'] else '–' for t in TASKS
                 for b in s.budgets]
    lines.append(f'| {NAMES["constant"]} | ' + ' | '.join(constants) + ' |')
    lines += ['', 'Differences of the means (positive = the first is better; seg in mIoU points), in units of the '
              'larger seed std of the two in brackets ("–" unless both have two seeds or more); ✓ = more than 3 '
              'std.', '',
              '| comparison | ' + ' | '.join(f'{t} @{b}' for t in TASKS for b in s.budgets) + ' |',
              '|---|' + '---|' * (len(TASKS) * len(s.budgets))]
    rows = {}
    for v in verdicts(args, results):
        scale = 100 if v['task'] == 'seg' else 1
        digits = 1 if v['task'] == 'seg' else (2 if v['task'] == 'normal' else 4)
        ratio = f'{v["diff"] / v["sigma"]:.1f}' if v['sigma'] > 0 else '–'
        rows.setdefault((v['full'], v['other']), {})[v['task'], v['budget']] = (
            f'{scale * v["diff"]:+.{digits}f} ({ratio}){" ✓" if v["beyond_3_std"] else ""}')
    for (full, other), cells in rows.items():
        lines.append(f'| {NAMES[full]} vs {NAMES[other]} | ' + ' | '.join(cells.get((t, b), '–') for t in TASKS
                                                                            for b in s.budgets) + ' |')
    cpu = results['cpu']
    total = cpu['data'] + cpu['pretrain'] + cpu['probe'] + cpu['finetune']
    extra = f' The diagnostics (`--diagnostics`) took {cpu["diagnostics"] / 60:.0f} CPU-minutes more.' if cpu[
        'diagnostics'] else ''
    finetune = f', fine-tuning {cpu["finetune"] / 60:.0f}' if cpu['finetune'] else ''
    lines += ['', f'CPU time: {total / 60:.0f} CPU-minutes in all (data {cpu["data"] / 60:.1f}, pretraining '
              f'{cpu["pretrain"] / 60:.0f}, probes {cpu["probe"] / 60:.0f}{finetune}), i.e. about '
              f'{total / 120:.0f} minutes on 2 quiet cores.{extra}']
    return '\n'.join(lines)


# (COCO AP is logged too, but stays near 0 for every run of this tiny recipe at 128x96)
FINETUNE_METRICS = dict(PCK='PCK@0.05 (bbox), 308 keypoints ↑')


def finetune_table(args) -> str:
    """Markdown table of the fine-tuning cells: the pose metrics per run (mean ± seed std) and each run from a
    pretrained backbone against random init in seed std."""
    s = args.setting
    values, cpu = {}, 0.0
    for run in s.finetune:
        cells = [read_json(finetune_json(args, run, seed)) for seed in s.seeds
                 if osp.isfile(finetune_json(args, run, seed))]
        cpu += sum(c['cpu_s'] for c in cells)
        for key in FINETUNE_METRICS:
            found = [next(v for k, v in c['metrics'].items() if k == key or k.endswith('/' + key)) for c in cells]
            if found:
                values[run, key] = found
    if not values:
        return 'No fine-tuning cell yet.'
    lines = ['| initialisation | ' + ' | '.join(FINETUNE_METRICS.values()) + ' |',
             '|---|' + '---|' * len(FINETUNE_METRICS)]
    for run in s.finetune:
        cells = []
        for key in FINETUNE_METRICS:
            vals = values.get((run, key))
            mean, std = _stats(vals) if vals else (0.0, 0.0)
            cells.append('not run' if not vals else f'{100 * mean:.1f}' + (
                f' ± {100 * std:.1f}' if len(vals) > 1 else '') + (
                f' ({len(vals)}/{len(s.seeds)} seeds)' if len(vals) < len(s.seeds) else ''))
        lines.append(f'| {FINETUNE_RUNS[run]["name"]} | ' + ' | '.join(cells) + ' |')
    runs = FINETUNE_RUNS
    # each pretrained run against the from-scratch runs of the plain recipe and of its own recipe
    pairs = [(run, other) for run in s.finetune if runs[run]['backbone'] for other in s.finetune
             if runs[other]['backbone'] is None and runs[other]['options'] in ([], runs[run]['options'])]
    for run, other in pairs:
        lines.append(f'| {runs[run]["name"]} vs {runs[other]["name"]} (points, in seed std) | ' + ' | '.join(
            _semantic_difference(values.get((run, k)), values.get((other, k))) or '–' for k in FINETUNE_METRICS) + ' |')
    iters = FINETUNE['quick_iters' if s.name == 'quick' else 'iters']
    lines += ['', f'{iters} iterations each (the recipe\'s budget), `{FINETUNE["config"]}` on the '
              f'labeled set; CPU time {cpu / 60:.0f} CPU-minutes.']
    return '\n'.join(lines)


def setting_marks(args, marks: tuple[str, str]) -> tuple[str, str]:
    """The docs markers of a table for this setting: the plain ones for ``full``, named after the setting else."""
    name = args.setting.name
    return marks if name == 'full' else tuple(m.replace(' table', f' {name} table') for m in marks)


def update_docs(path: str, text: str, marks: tuple[str, str] = (MARK_START, MARK_END)) -> None:
    """Replace the text between the two ``marks`` in the markdown file ``path``."""
    start, end = marks
    with open(path) as f:
        doc = f.read()
    if start not in doc or end not in doc:
        raise ValueError(f'{path} lacks the markers {start} / {end} around the table to replace')
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, 'w') as f:
        f.write(f'{head}{start}\n{text}\n{end}{tail}')


def report(args) -> str:
    results = collect(args)
    text = table(args, results)
    print(text)
    semantic = semantic_table(args)
    print(semantic)
    if args.setting.finetune:
        finetune = finetune_table(args)
        print(finetune)
    if args.docs:
        update_docs(args.docs, text, setting_marks(args, (MARK_START, MARK_END)))
        update_docs(args.docs, semantic, setting_marks(args, SEMANTIC_MARKS))
        update_docs(args.docs, teacher_spread(args), setting_marks(args, SPREAD_MARKS))
        update_docs(args.docs, target_groups(args), setting_marks(args, GROUP_MARKS))
        if args.setting.finetune:
            update_docs(args.docs, finetune, setting_marks(args, FINETUNE_MARKS))
        if args.setting.name != 'full':  # the pictures are of the plain set's runs
            return text
        images = osp.join(osp.dirname(args.docs), 'images')
        os.makedirs(images, exist_ok=True)
        plot_health(args, osp.join(images, 'pretraining_health.png'))
        plot_reconstruction(args, osp.join(images, 'pretraining_mae_reconstruction.jpg'))
    return text
