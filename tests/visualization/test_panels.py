"""The panels the tasks register for the composite picture: a task class that sets ``panel`` registers it under its
name, an unknown task is a KeyError that names the registered ones, and a registered person mask cuts the others."""
import numpy as np
import pytest

from sapiens2.apis.tasks import BaseInferenceTask
from sapiens2.visualization.composite import composite_picture, foreground_mask, panel_layout, task_panel
from sapiens2.visualization.panels import TASK_PANELS, Panel, PanelOptions, register_panel, task_panel_of


def inverted(image, result, mask, options):
    return 255 - image


def halves(result):
    return result['left']


@pytest.fixture
def toy_task():
    """A task class ``toy`` whose panel inverts the image and whose result outlines the person."""

    class ToyTask(BaseInferenceTask):
        name = 'toy'
        panel = Panel('inverted', inverted, person_mask=halves)

    yield ToyTask
    TASK_PANELS.pop('toy')


def test_a_task_class_with_a_panel_registers_it_under_its_name(toy_task):
    assert task_panel_of('toy') is toy_task.panel

    class Quiet(toy_task):  # a subclass that does not set its own panel registers nothing
        name = 'quiet'

    assert 'quiet' not in TASK_PANELS
    image = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    np.testing.assert_array_equal(task_panel(image, 'toy', {}, None), 255 - image)


def test_other_registered_tasks_follow_the_released_panels_and_give_the_mask(toy_task):
    image = np.full((8, 6, 3), 10, np.uint8)
    left = np.zeros((8, 6), bool)
    left[:, :3] = True
    results = {'toy': dict(left=left), 'unknown': {}}
    assert panel_layout(results)[-1] == ('inverted', 'toy') and len(panel_layout(results)) == 8
    assert foreground_mask(results) is left
    assert composite_picture(image, results).shape[1] == 8 * 6


def test_unknown_tasks_and_nameless_panels_are_refused():
    with pytest.raises(KeyError, match=r"no composite panel for task 'nothing'; registered: \["):
        task_panel_of('nothing')
    with pytest.raises(ValueError, match='needs the name'):
        register_panel('', Panel('untitled', inverted))
    assert PanelOptions().kpt_thr == 0.3
