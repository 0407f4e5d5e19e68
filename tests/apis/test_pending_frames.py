"""PendingFrames: video frames wait until every task's result is final; images pass straight through."""
from types import SimpleNamespace

from sapiens2.apis.pending_frames import PendingFrames


class LaggingTask:
    """Final results two frames late; settle marks them."""
    name = 'lagging'

    def __init__(self):
        self.last = {}

    def settled_until(self, stream):
        return self.last.get(stream, -1) - 2

    def settle(self, stream, frame, result):
        return dict(result, settled=True)


class PlainTask:
    name = 'plain'

    def settled_until(self, stream):
        return None

    def settle(self, stream, frame, result):
        return result


def test_frames_are_released_in_order_once_final():
    lagging = LaggingTask()
    pending = PendingFrames([lagging, PlainTask()])
    video, image = SimpleNamespace(kind='video', name='clip'), SimpleNamespace(kind='image', name='photo')
    released = []
    for t in range(5):
        lagging.last['clip'] = t
        released += pending.add(video, t, None, dict(lagging={}, plain=dict(t=t)))
        assert [index for _, index, _, _ in released] == list(range(max(t - 1, 0)))
    photo = pending.add(image, 0, None, dict(lagging={}, plain={}))
    assert len(photo) == 1 and 'settled' not in photo[0][3]['lagging']  # images are final at once
    released += pending.flush(video)
    assert [index for _, index, _, _ in released] == list(range(5)) and not pending.held
    assert all(results['lagging']['settled'] and results['plain']['t'] == index
               for _, index, _, results in released)
