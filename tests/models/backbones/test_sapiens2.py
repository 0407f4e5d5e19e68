import json

import pytest
import torch
from safetensors.torch import load_file

from sapiens2.models import ARCH_SETTINGS, Sapiens2
from sapiens2.models.layers import attention
from tests import official_data

LAYOUTS = {
    'sapiens2_0.1b': dict(arch='sapiens2_0.1b'),
    'sapiens2_0.4b': dict(arch='sapiens2_0.4b'),
    'sapiens2_0.8b': dict(arch='sapiens2_0.8b'),
    'sapiens2_1b': dict(arch='sapiens2_1b'),
    'sapiens2_5b': dict(arch='sapiens2_5b'),
    'sapiens2_1b_4k_tokenizer_4096x3072': dict(arch='sapiens2_1b', use_tokenizer=True, img_size=(4096, 3072)),
}


def tiny(**kwargs) -> Sapiens2:
    kwargs.setdefault('arch', 'sapiens2_nano')
    kwargs.setdefault('img_size', (64, 48))
    model = Sapiens2(**kwargs)
    model.init_weights()
    return model.eval()


@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_state_dict_matches_official_layout(layout):
    reference = json.loads(official_data('state_dicts', f'{layout}.json').read_text())
    with torch.device('meta'):
        model = Sapiens2(**LAYOUTS[layout])
    state = model.state_dict()
    assert list(state) == list(reference)
    assert {k: list(v.shape) for k, v in state.items()} == reference
    assert state['rope_embed.periods'].dtype == torch.bfloat16


def test_gqa_placement_and_param_count_match_summary():
    summary = json.loads(official_data('state_dicts', 'backbones_summary.json').read_text())
    for name in ('sapiens2_0.1b', 'sapiens2_0.4b', 'sapiens2_5b'):
        with torch.device('meta'):
            model = Sapiens2(arch=name)
        gqa = [i for i, b in enumerate(model.blocks) if b.attn.num_kv_heads != b.attn.num_heads]
        assert gqa == summary[name]['gqa_block_indices']
        assert sum(p.numel() for p in model.parameters()) == summary[name]['total_parameters']
    periods = Sapiens2(arch='sapiens2_nano', img_size=(32, 32)).rope_embed.periods
    assert periods.dtype == torch.bfloat16 and periods[0] == 1.0


# Golden tolerances. 'tiny_rope_fp32' runs in fp32 only and reproduces to fp32 rounding with any kernels. The bf16
# RoPE cases round q and k to bf16 in every block (official dtype flow): a q/k value within a few fp32 ulps of a bf16
# rounding tie rounds either way depending on the summation order of the fp32 matmul/attention kernels (CPU ISA,
# BLAS), and each such flip moves the outputs by up to ~1e-4 at block 1 and ~5e-3 at the final block, i.e. relative L2
# errors up to 2e-4 and 6e-4 (docs/differences.md#golden-vectors). The bounds below leave a margin of >= 3x over that.
# Structural errors give far more: a dropped RoPE, QK-norm after RoPE, a wrong head split or attention scale, swapped
# SwiGLU halves, a wrong RMSNorm eps or a wrong window order all exceed 3e-3 (relative L2) or 0.02 (max abs). The bf16
# dtype flow itself, whose mistakes are only 2-8x above this noise, is pinned exactly by
# test_attention_sees_bf16_rounded_queries_and_keys.
BF16_ROPE_BOUNDS = (dict(rel_l2=1e-3, max_abs=1e-3), dict(rel_l2=2e-3, max_abs=2e-2))  # out index 0 (block 1), 1 (last)


def _assert_matches_golden(case: str, index: int, out: torch.Tensor, expected: torch.Tensor) -> None:
    assert out.shape == expected.shape
    if case == 'tiny_rope_fp32':
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
        return
    error = out - expected
    rel_l2, max_abs = (error.norm() / expected.norm()).item(), error.abs().max().item()
    bounds = BF16_ROPE_BOUNDS[index]
    assert rel_l2 <= bounds['rel_l2'] and max_abs <= bounds['max_abs'], (
        f'{case} output {index}: relative L2 error {rel_l2:.3g} (bound {bounds["rel_l2"]:g}), '
        f'max abs error {max_abs:.3g} (bound {bounds["max_abs"]:g})')


def _golden_case(case):
    meta = json.loads(official_data('golden', 'golden.json').read_text())
    return meta, meta['cases'][case]


@pytest.mark.parametrize('case', ['tiny_plain', 'tiny_tokenizer', 'tiny_rope_fp32'])
@pytest.mark.parametrize('out_type', ['raw', 'featmap', 'cls_token'])
def test_golden_vectors(case, out_type):
    meta, spec = _golden_case(case)
    weights = load_file(official_data('golden', f'{case}.weights.safetensors'))
    io = load_file(official_data('golden', f'{case}.io.safetensors'))
    model = Sapiens2(arch=meta['arch'], layer_cfgs=meta['layer_cfgs'], patch_size=meta['patch_size'],
                     out_type=out_type, **spec['constructor'])
    model.load_state_dict(weights, strict=True)
    model.eval()
    with torch.no_grad():
        outs = model(io['input'])
    assert len(outs) == 2
    for index, out in enumerate(outs):
        _assert_matches_golden(case, index, out, io[f'{out_type}.{index}'])


@pytest.mark.parametrize('rope_dtype', ['bf16', 'fp32'])
def test_attention_sees_bf16_rounded_queries_and_keys(rope_dtype, monkeypatch):
    """Official dtype flow: RoPE rounds q and k (prefix tokens included) to bf16 and rotates them in bf16."""
    seen = []
    sdpa = attention.F.scaled_dot_product_attention

    def spy(q, k, v, **kwargs):
        seen.append((q, k))
        return sdpa(q, k, v, **kwargs)

    monkeypatch.setattr(attention.F, 'scaled_dot_product_attention', spy)
    model = tiny(pos_embed_rope_dtype=rope_dtype)
    with torch.no_grad():
        model(torch.randn(2, 3, 64, 48))
    assert len(seen) == model.num_layers
    for q, k in seen:
        assert q.dtype == k.dtype == torch.float32
        bf16_exact = [torch.equal(t, t.bfloat16().float()) for t in (q, k)]
        assert bf16_exact == [rope_dtype == 'bf16'] * 2


@pytest.mark.parametrize('out_type,shape', [('raw', (2, 9 + 12, 64)), ('featmap', (2, 64, 4, 3)),
                                             ('cls_token', (2, 64))])
def test_output_shapes_and_indices(out_type, shape):
    model = tiny(out_type=out_type, out_indices=[0, -1])
    outs = model(torch.randn(2, 3, 64, 48))
    assert isinstance(outs, tuple) and len(outs) == 2
    assert all(o.shape == shape for o in outs)


def test_final_norm_only_after_last_block():
    model = tiny(out_type='raw', out_indices=[0, 1])
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        first, last = model(x)
        model.ln1 = torch.nn.Identity()
        first_no_norm, last_no_norm = model(x)
    torch.testing.assert_close(first, first_no_norm)
    assert not torch.allclose(last, last_no_norm)


def test_tokenizer_reduces_grid_and_chunks_windows():
    model = tiny(out_type='featmap', use_tokenizer=True, img_size=(256, 128))
    x = torch.randn(2, 3, 256, 128)
    with torch.no_grad():
        model.tokenizer.chunk_size = 1024  # 2 x 4 x 2 windows in one chunk
        full = model(x)[0]
        model.tokenizer.chunk_size = 1  # one window row (band) per chunk: 4 chunks, same result
        chunked = model(x)[0]
    assert full.shape == (2, 64, 4, 2)
    torch.testing.assert_close(full, chunked, rtol=1e-5, atol=1e-5)


def test_tokenizer_equals_tokenizing_the_whole_patch_grid():
    """Band-wise patch embedding and windowing give the tokens of embedding the whole image and windowing it."""
    model = tiny(out_type='featmap', use_tokenizer=True, img_size=(256, 128)).eval()
    tokenizer, x = model.tokenizer, torch.randn(1, 3, 256, 128)
    with torch.no_grad():
        tokenizer.chunk_size = 1
        banded, grid = tokenizer(x, model.patch_embed)
        patches, (height, width) = model.patch_embed(x)
        w, channels = tokenizer.window_size, patches.shape[-1]
        windows = patches.view(height // w, w, width // w, w, channels).permute(0, 2, 1, 3, 4).reshape(-1, w * w,
                                                                                                        channels)
        windows = torch.cat((tokenizer.w_cls.expand(len(windows), -1, -1), windows), 1) + tokenizer.local_pos_embed
        for block in tokenizer.blocks:
            windows = block(windows)
    assert grid == (4, 2)
    torch.testing.assert_close(banded[0], windows[:, 0], rtol=1e-5, atol=1e-5)


def test_sparse_encoding_equals_dense_with_all_tokens_kept():
    model = tiny(out_type='raw')
    x = torch.randn(2, 3, 64, 48)
    keep = torch.arange(12).expand(2, -1)
    with torch.no_grad():
        dense = model(x)[0]
        sparse = model(x, keep_indices=keep)[0]
        masked = model(x, keep_mask=torch.ones(2, 12, dtype=torch.bool))[0]
    torch.testing.assert_close(sparse, dense)
    torch.testing.assert_close(masked, dense)


def test_sparse_encoding_keeps_true_positions():
    model = tiny(out_type='raw')
    x = torch.randn(1, 3, 64, 48)
    keep = torch.tensor([[1, 5, 7, 10]])
    with torch.no_grad():
        sparse = model(x, keep_indices=keep)[0]
        shuffled = model(x, keep_indices=keep[:, [2, 0, 3, 1]])[0]
    assert sparse.shape == (1, 9 + 4, 64)
    # Attention is permutation-equivariant given true RoPE positions: reordering kept tokens reorders outputs.
    torch.testing.assert_close(shuffled[:, 9:], sparse[:, 9:][:, [2, 0, 3, 1]], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(shuffled[:, :9], sparse[:, :9], rtol=1e-4, atol=1e-5)


def test_gradients_reach_every_parameter():
    model = tiny(out_type='raw', use_tokenizer=True, img_size=(128, 64), with_cp=True).train()
    model(torch.randn(2, 3, 128, 64))[0].square().mean().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
    assert missing == []


def test_bf16_autocast_runs():
    model = tiny(out_type='featmap')
    with torch.autocast('cpu', dtype=torch.bfloat16), torch.no_grad():
        out = model(torch.randn(1, 3, 64, 48))[0]
    assert out.shape == (1, 64, 4, 3) and torch.isfinite(out.float()).all()


def test_frozen_stages():
    model = Sapiens2(arch='sapiens2_tiny', img_size=(128, 64), frozen_stages=2, use_tokenizer=True)
    model.train()
    assert not any(p.requires_grad for p in model.patch_embed.parameters())
    assert not any(p.requires_grad for p in model.tokenizer.parameters())
    assert not model.cls_token.requires_grad and not model.storage_tokens.requires_grad
    assert all(not p.requires_grad for b in model.blocks[:2] for p in b.parameters())
    assert all(p.requires_grad for b in model.blocks[2:] for p in b.parameters())
    assert model.ln1.weight.requires_grad and not model.blocks[0].training and model.blocks[2].training
    fully = Sapiens2(arch='sapiens2_nano', img_size=(32, 32), frozen_stages=2)
    assert not fully.ln1.weight.requires_grad


def test_custom_arch_and_layer_cfgs():
    arch = dict(embed_dims=32, num_layers=3, num_heads=2, feedforward_channels=64, num_tokenizer_layers=1)
    model = Sapiens2(arch=arch, img_size=(32, 32), layer_cfgs=[{}, dict(num_kv_heads=1), {}])
    assert [b.attn.num_kv_heads for b in model.blocks] == [2, 1, 2]
    assert model.state_dict()['blocks.1.attn.wk.weight'].shape == (16, 32)
    assert 'sapiens2_tiny' in ARCH_SETTINGS and 'sapiens2_nano' in ARCH_SETTINGS


def test_official_arch_name_aliases():
    with torch.device('meta'):
        assert Sapiens2(arch='SAPIENS2_0.4B').embed_dims == 1024
        assert Sapiens2(arch='0.4b').embed_dims == 1024


@pytest.mark.parametrize('kwargs,match', [
    (dict(arch='sapiens2_2b'), 'Unknown Sapiens2 arch'),
    (dict(arch=dict(embed_dims=64)), 'missing'),
    (dict(img_size=(100, 48)), 'multiples of patch_size = 16'),
    (dict(img_size=(64, 48), use_tokenizer=True), r'patch_size x window_size = 64'),
    (dict(out_indices=[2]), 'out of range'),
    (dict(out_type='tokens'), 'out_type'),
])
def test_bad_constructor_arguments(kwargs, match):
    kwargs = {'arch': 'sapiens2_nano', 'img_size': (64, 48), **kwargs}
    with pytest.raises(ValueError, match=match):
        Sapiens2(**kwargs)


def test_bad_inputs_at_forward():
    model = tiny(out_type='featmap')
    with pytest.raises(ValueError, match=r'multiples of patch_size'):
        model(torch.randn(1, 3, 70, 48))
    with pytest.raises(ValueError, match=r'3 channels are expected in dim 1 of \(N, C, H, W\), got shape \(1, 4, '):
        model(torch.randn(1, 4, 64, 48))
    with pytest.raises(ValueError, match=r'looks channels-last \(N, H, W, C\): use x.permute\(0, 3, 1, 2\)'):
        model(torch.randn(1, 64, 48, 3))
    with pytest.raises(ValueError, match=r'dtype is torch.uint8: the backbone takes float images normalised'):
        model(torch.zeros(1, 3, 64, 48, dtype=torch.uint8))
    with pytest.raises(ValueError, match=r'\(N, C, H, W\) batch is expected, got shape \(3, 64, 48\) \(add the batch'):
        model(torch.randn(3, 64, 48))
    with pytest.raises(ValueError, match='featmap'):
        model(torch.randn(1, 3, 64, 48), keep_indices=torch.tensor([[0, 1]]))


def test_fused_qkv_backbone_equals_default():
    model = tiny(out_type='raw', out_indices=[0, -1])
    x = torch.randn(2, 3, 64, 48)
    with torch.no_grad():
        expected = model(x)
        model.fuse_qkv = True
        fused = model(x)
    for out, ref in zip(fused, expected):
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_ffn_chunking_defaults_to_the_tokenizer_models_only():
    assert all(b.ffn_chunk_tokens is None for b in tiny().blocks)
    model = tiny(use_tokenizer=True, img_size=(128, 64))
    assert {b.ffn_chunk_tokens for b in [*model.blocks, *model.tokenizer.blocks]} == {512}
    assert all(b.ffn_chunk_tokens is None for b in tiny(use_tokenizer=True, img_size=(128, 64),
                                                         ffn_chunk_tokens=0).blocks)
    assert all(b.ffn_chunk_tokens == 64 for b in tiny(ffn_chunk_tokens=64).blocks)


def _nano(init_cfg=None) -> Sapiens2:
    return Sapiens2(arch='sapiens2_nano', img_size=(32, 32), init_cfg=init_cfg)


def test_init_cfg_of_another_type_applies_over_the_official_init():
    model = _nano(dict(type='Constant', layer='Linear', val=0.5, bias=0.25))
    model.init_weights()
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert linears and all(bool((m.weight == 0.5).all()) for m in linears)
    assert all(m.bias is None or bool((m.bias == 0.25).all()) for m in linears)
    assert float(model.storage_tokens.std()) > 0  # the rest keeps the official random init


def test_pretrained_init_cfg_is_applied_last(tmp_path):
    from sapiens2.engine import save_weights
    source = _nano()
    source.init_weights()
    path = str(tmp_path / 'w.safetensors')
    save_weights(source.state_dict(), path)
    model = _nano([dict(type='Pretrained', checkpoint=path), dict(type='Constant', layer='Linear', val=0.5)])
    model.init_weights()
    assert all(torch.equal(v, source.state_dict()[k]) for k, v in model.state_dict().items())


def test_pretrained_init_cfg_with_a_prefix(tmp_path):
    from sapiens2.engine import save_weights
    source = _nano()
    source.init_weights()
    path = str(tmp_path / 'task.safetensors')
    save_weights({**{f'backbone.{k}': v for k, v in source.state_dict().items()}, 'head.w': torch.ones(1)}, path)
    model = _nano(dict(type='Pretrained', checkpoint=path, prefix='backbone.'))
    model.init_weights()
    assert torch.equal(model.ln1.weight, source.ln1.weight)


def test_bad_pretrained_init_cfg():
    with pytest.raises(ValueError, match=r"Pretrained takes .*got \['checkpoint', 'strct', 'type'\]"):
        _nano(dict(type='Pretrained', checkpoint='x.safetensors', strct=False)).init_weights()
    with pytest.raises(ValueError, match='2 Pretrained entries'):
        _nano([dict(type='Pretrained', checkpoint='a'), dict(type='Pretrained', checkpoint='b')]).init_weights()
