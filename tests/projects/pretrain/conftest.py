"""Tiny pretraining model and inputs shared by the pretraining tests."""
import pytest
import torch
from mmengine.registry import DefaultScope

from sapiens2.registry import MODELS


def build_tiny_pretrainer(**overrides) -> torch.nn.Module:
    cfg = dict(
        type='Sapiens2Pretrainer',
        backbone=dict(type='Sapiens2', arch='sapiens2_nano', img_size=(64, 48), out_type='raw'),
        mae_decoder=dict(type='MAEDecoder', embed_dims=32, num_layers=1, num_heads=2),
        dino_head=dict(type='DINOHead', num_prototypes=16, hidden_dim=32, bottleneck_dim=16),
        data_preprocessor=dict(type='MultiViewDataPreprocessor'))
    cfg.update(overrides)
    with DefaultScope.overwrite_default_scope('sapiens2'):  # other tests may leave another default scope behind
        model = MODELS.build(cfg)
    model.init_weights()
    return model


def make_tiny_inputs(batch: int = 2, num_local: int = 2, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    return dict(global_views=torch.randn(batch, 2, 3, 64, 48, generator=g),
                local_views=torch.randn(batch, num_local, 3, 32, 32, generator=g))


@pytest.fixture
def tiny_pretrainer():
    """Factory: tiny ``Sapiens2Pretrainer`` (nano backbone, 64x48 global views), config overrides as kwargs."""
    return build_tiny_pretrainer


@pytest.fixture
def tiny_inputs():
    """Factory: preprocessed multi-view inputs for the tiny pretrainer."""
    return make_tiny_inputs


@pytest.fixture
def one_thread():
    """Run a small-tensor test on one intra-op thread (much faster than 2 contended threads on shared cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
