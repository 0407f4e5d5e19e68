"""Process-group set-up that also works on machines without a GPU, with a bounded wait for a frozen rank.

MMEngine 0.10.7's launchers call ``torch.cuda.set_device`` before ``init_process_group``, which fails on a CPU-only
machine. :func:`init_distributed` sets up a gloo process group there and defers to MMEngine when a GPU is present.
Once a process group exists, MMEngine's ``Runner.setup_env`` and strategies skip their own initialisation.

Every collective waits at most ``timeout`` seconds (``env_cfg.dist_cfg.timeout``, default
:data:`DEFAULT_TIMEOUT_S`) for the other ranks, and each rank beats a heartbeat (:mod:`.heartbeat`) so that a rank
that stops responding is named, in a warning and in the error. A rank whose torchrun agent is gone stops
(:mod:`.agent_watchdog`).
"""
import datetime
import os
import subprocess

import torch
import torch.distributed as torch_dist
from mmengine.dist import init_dist

from .agent_watchdog import watch_agent
from .heartbeat import start_heartbeat

CPU_BACKEND = 'gloo'
#: Seconds a collective waits for the other ranks before failing: long enough for one rank to save a multi-GB
#: checkpoint or compute a metric while the others wait, short enough that a frozen rank ends the job.
DEFAULT_TIMEOUT_S = 1800


def has_accelerator() -> bool:
    """Whether a CUDA device is usable in this process."""
    return torch.cuda.is_available()


def init_distributed(launcher: str | None, backend: str = 'nccl', **kwargs) -> None:
    """Initialise ``torch.distributed`` for ``launcher`` ('pytorch' or 'slurm'; 'none'/None is a no-op).

    With a GPU this is ``mmengine.dist.init_dist(launcher, backend, **kwargs)``. Without one the backend becomes
    gloo, no device is selected, and ``timeout`` (seconds) is converted as MMEngine does. ``timeout`` defaults to
    :data:`DEFAULT_TIMEOUT_S`; the rank's heartbeat starts once the group exists, the agent watchdog (under
    torchrun) before.
    """
    if launcher in (None, 'none') or torch_dist.is_initialized():
        return
    timeout = kwargs.setdefault('timeout', DEFAULT_TIMEOUT_S)
    watch_agent()  # from the rendezvous on
    if has_accelerator():
        init_dist(launcher, backend=backend, **kwargs)
        start_heartbeat(timeout)
        return
    if launcher == 'slurm':
        _export_slurm_env(kwargs.pop('port', None))
    elif launcher != 'pytorch':
        raise ValueError(f"launcher '{launcher}' is not supported without a GPU; use 'pytorch' (torchrun, "
                         "tools/dist_train.sh) or 'slurm'")
    kwargs['timeout'] = datetime.timedelta(seconds=timeout)
    torch_dist.init_process_group(backend=CPU_BACKEND, **kwargs)
    start_heartbeat(timeout)


def _export_slurm_env(port: int | None) -> None:
    """Translate SLURM's task variables into the ones ``init_process_group`` reads (env:// rendezvous)."""
    nodes = os.environ['SLURM_NODELIST']
    os.environ.setdefault('MASTER_ADDR', subprocess.getoutput(f'scontrol show hostname {nodes} | head -n1'))
    os.environ['MASTER_PORT'] = str(port or os.environ.get('MASTER_PORT', 29500))
    os.environ['WORLD_SIZE'] = os.environ['SLURM_NTASKS']
    os.environ['RANK'] = os.environ['SLURM_PROCID']
    os.environ['LOCAL_RANK'] = os.environ.get('SLURM_LOCALID', '0')
