"""The health measures and verdicts of the self-distillation targets on constructed cases, and on a tiny model."""
import pytest
import torch

from sapiens2_pretrain.health import (
    HealthThresholds,
    format_verdict,
    health_passed,
    health_verdict,
    normalized_mutual_information,
    target_health,
    teacher_targets,
)

N, K = 64, 256


def _failed(probs: torch.Tensor) -> set:
    return {row['name'] for row in health_verdict(target_health(probs)) if not row['passed']}


def test_flat_targets_fail_entropy():
    health = target_health(torch.full((N, K), 1 / K))
    assert health['entropy'] == pytest.approx(1.0)
    assert 'entropy' in _failed(torch.full((N, K), 1 / K))


def test_collapsed_targets_fail_collapse_and_usage():
    probs = torch.zeros(N, K)
    probs[:, 7] = 1.0
    health = target_health(probs)
    assert health['usage'] == pytest.approx(1 / N) and health['batch_entropy'] == pytest.approx(0.0)
    assert _failed(probs) == {'usage', 'batch_entropy'}
    rows = {r['name']: r for r in health_verdict(health)}
    assert 'collapse' in rows['batch_entropy']['reason'] and rows['entropy']['reason'] == ''


def test_sharp_diverse_targets_pass():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(N, K, generator=g)
    logits[torch.arange(N), torch.randperm(K, generator=g)[:N]] += 12.0  # one distinct winner per image
    probs = logits.softmax(-1)
    health = target_health(probs)
    assert health['entropy'] < 0.3 and health['usage'] == 1.0
    assert health['batch_entropy'] == pytest.approx(1.0, abs=0.05)  # N equally used prototypes: log N / log N
    assert health_passed(health) and _failed(probs) == set()
    assert 'FAIL' not in format_verdict(health_verdict(health))


def test_thresholds_are_the_pass_marks():
    health = dict(entropy=0.9, usage=0.25, batch_entropy=0.5)
    assert [r['passed'] for r in health_verdict(health)] == [False, True, False]
    assert health_passed(health, HealthThresholds(max_entropy=0.95, min_batch_entropy=0.4))


def test_target_health_rejects_a_single_image():
    with pytest.raises(ValueError, match='N >= 2'):
        target_health(torch.ones(1, 4) / 4)


def test_normalized_mutual_information_by_hand_and_its_limits():
    a = torch.tensor([0, 0, 1, 1])
    assert normalized_mutual_information(a, torch.tensor([7, 7, 3, 3])) == pytest.approx(1.0)  # renamed classes
    assert normalized_mutual_information(a, torch.tensor([0, 1, 0, 1])) == pytest.approx(0.0)  # independent
    assert normalized_mutual_information(a, torch.tensor([5, 5, 5, 5])) == 0.0  # one labeling is constant
    # a = (0, 0, 1, 1), b = (0, 1, 2, 2): I = H(a) = log 2, H(b) = 1.5 log 2 -> 1 / sqrt(1.5)
    assert normalized_mutual_information(a, torch.tensor([0, 1, 2, 2])) == pytest.approx(1.5 ** -0.5)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 8, (4000,), generator=g), torch.randint(0, 3, (4000,), generator=g)
    assert normalized_mutual_information(x, y) < 0.01


def test_teacher_targets_of_a_fresh_pretrainer_are_the_same_for_every_image(tiny_pretrainer):
    """At initialisation (LayerScale 1e-4, centre 0) the teacher's output hardly depends on the image: collapse."""
    model = tiny_pretrainer().eval()
    probs = teacher_targets(model, torch.randn(8, 3, 64, 48, generator=torch.Generator().manual_seed(0)))
    assert probs.shape == (8, 16) and torch.allclose(probs.sum(-1), torch.ones(8))
    assert (probs - probs.mean(0)).abs().max() < 1e-2
    assert target_health(probs)['usage'] == 1 / 8 and 'usage' in _failed(probs)
    logits = torch.log(probs) * model.dino_loss.teacher_temp_final
    model.dino_loss.center.copy_(logits.mean(0, keepdim=True))
    flat = teacher_targets(model, torch.randn(8, 3, 64, 48, generator=torch.Generator().manual_seed(0)))
    assert target_health(flat)['entropy'] > 0.99 and 'entropy' in _failed(flat)


def _health_tool():
    import importlib.util
    import os.path as osp
    root = osp.dirname(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))
    spec = importlib.util.spec_from_file_location('health_check', osp.join(root, 'projects', 'pretrain', 'tools',
                                                                           'health_check.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_health_check_tool_on_a_fresh_checkpoint(tmp_path, capsys):
    """A freshly initialised nano pretrainer gives every image the same target: the tool says FAIL (exit 1)."""
    import cv2
    import numpy as np
    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    from sapiens2.registry import MODELS
    tool = _health_tool()
    config = 'projects/pretrain/configs/sapiens2_nano_pretrain_synthhumans-128x96.py'
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('sapiens2'):
        model = MODELS.build(Config.fromfile(config).model)
    model.init_weights()
    torch.save(dict(state_dict=model.state_dict()), tmp_path / 'fresh.pth')
    rng = np.random.default_rng(0)
    for i in range(6):
        cv2.imwrite(str(tmp_path / f'{i}.png'), rng.integers(0, 256, (40, 30, 3), dtype=np.uint8))
    assert tool.main([config, str(tmp_path / 'fresh.pth'), str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert 'teacher targets of 6 images (256 prototypes)' in out and 'verdict: FAIL' in out
    assert all(f'| {m} |' in out for m in ('entropy', 'usage', 'batch_entropy'))
    with pytest.raises(ValueError, match='trains no self-distillation'):
        tool.main([config, str(tmp_path / 'fresh.pth'), str(tmp_path), '--cfg-options', 'model.loss_weights.dino=0'])
    (tmp_path / 'broken.png').write_bytes(b'')
    with pytest.raises(ValueError, match='broken.png is not a readable image'):
        tool.main([config, str(tmp_path / 'fresh.pth'), str(tmp_path)])
