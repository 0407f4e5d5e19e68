"""The Sapiens2 vision transformer backbone (official ``sapiens/backbones/sapiens2.py``)."""
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from mmengine.model import BaseModule
from mmengine.model.weight_init import PretrainedInit, initialize
from mmengine.registry import MODELS
from torch import nn
from torch.utils.checkpoint import checkpoint

from sapiens2.utils.devices import int8_kernel

from ..layers import (
    LayerScale,
    PatchEmbed,
    RMSNorm,
    RopePositionEmbedding,
    TransformerBlock,
    WindowTokenizer,
    rope_dtype_from_name,
)
from ..layers.compiled_block import CompiledBlockRunner
from ..layers.int8_linear import quantize_linears

ARCH_SETTINGS: Dict[str, Dict[str, int]] = {
    'sapiens2_nano': dict(embed_dims=64, num_layers=2, num_heads=2, feedforward_channels=256, num_tokenizer_layers=1),
    'sapiens2_tiny': dict(embed_dims=128, num_layers=4, num_heads=2, feedforward_channels=512, num_tokenizer_layers=1),
    'sapiens2_0.1b': dict(embed_dims=768, num_layers=12, num_heads=12, feedforward_channels=3072,
                          num_tokenizer_layers=2),
    'sapiens2_0.4b': dict(embed_dims=1024, num_layers=24, num_heads=16, feedforward_channels=4096,
                          num_tokenizer_layers=2),
    'sapiens2_0.8b': dict(embed_dims=1280, num_layers=32, num_heads=16, feedforward_channels=5120,
                          num_tokenizer_layers=3),
    'sapiens2_1b': dict(embed_dims=1536, num_layers=40, num_heads=24, feedforward_channels=6144,
                        num_tokenizer_layers=4),
    'sapiens2_5b': dict(embed_dims=2432, num_layers=56, num_heads=32, feedforward_channels=9728,
                        num_tokenizer_layers=6),
}
ARCH_KEYS = ('embed_dims', 'num_layers', 'num_heads', 'feedforward_channels', 'num_tokenizer_layers')
OUT_TYPES = ('raw', 'cls_token', 'featmap')
# Blocks closer than this to either end use full multi-head attention; the middle uses GQA with h/2 kv heads.
MHSA_EDGE_BLOCKS = 8
# Feed-forward chunk (tokens) of 4K-tokenizer models at inference: hidden activations of 512 x 8C floats.
TOKENIZER_FFN_CHUNK_TOKENS = 512
PRETRAINED_KEYS = frozenset({'type', 'checkpoint', 'prefix', 'strict', 'map_location', 'allow_non_finite_weights'})


def resolve_arch(arch: Union[str, dict]) -> Dict[str, int]:
    """Returns the arch settings for a name (case-insensitive) or validates a dict of ``ARCH_KEYS``."""
    if isinstance(arch, str):
        name = arch.lower()
        if name not in ARCH_SETTINGS and f'sapiens2_{name}' in ARCH_SETTINGS:
            name = f'sapiens2_{name}'
        if name not in ARCH_SETTINGS:
            raise ValueError(f'Unknown Sapiens2 arch {arch!r}; choose one of {sorted(ARCH_SETTINGS)} '
                             f'or pass a dict with keys {ARCH_KEYS}.')
        return dict(ARCH_SETTINGS[name])
    missing = set(ARCH_KEYS) - set(arch)
    if missing:
        raise ValueError(f'Custom Sapiens2 arch dict is missing {sorted(missing)}; it needs {ARCH_KEYS}.')
    return {k: int(arch[k]) for k in ARCH_KEYS}


def _to_hw(size: Union[int, Sequence[int]]) -> Tuple[int, int]:
    return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))


@MODELS.register_module()
class Sapiens2(BaseModule):
    """Sapiens2 backbone: patch embed, optional 4K window tokenizer, [CLS] + register tokens, RoPE transformer.

    Keyword arguments and defaults follow the official ``Sapiens2``. ``arch`` is a name from
    ``ARCH_SETTINGS`` or a dict with ``ARCH_KEYS``. ``layer_cfgs`` is a dict applied to every block or a list with one
    dict per block; its ``num_kv_heads`` overrides the default GQA placement. ``with_cp`` checkpoints each block's
    activations in training. ``init_cfg=dict(type='Pretrained', checkpoint=PATH, prefix=None, strict=True)`` loads a
    checkpoint (.safetensors or torch, or a registered URI) strictly unless ``strict=False``; other MMEngine init
    types apply on top of the official random init (see :meth:`init_weights`).

    ``forward(x, keep_indices=None, keep_mask=None)`` returns a tuple with one entry per out index:
    'raw' (B, prefix + tokens, C), 'cls_token' (B, C) or 'featmap' (B, C, H/p, W/p). ``keep_indices`` (B, K) or a
    boolean ``keep_mask`` (B, num_patches) encodes only the kept patch tokens, each at its true RoPE position.

    ``ffn_chunk_tokens``: without gradients, every block's feed-forward runs over at most this many tokens at a time
    (:class:`TransformerBlock`), equal to one pass up to fp32 summation order. None (default) means 512 with the 4K
    tokenizer, whose activations are the largest, and one pass otherwise; 0 means one pass always.

    Opt-in speed-ups (docs/performance.md), off by default so that the default is the official function:
    ``fuse_qkv=True`` runs each block's q/k/v projections as one GEMM when no gradients are recorded (exact: the
    same values to fp32 rounding; one extra copy of the q/k/v weights in memory). ``compile=True`` runs the
    transformer blocks through ``torch.compile`` (one compiled block shared by all blocks of the same kind); if
    compiling fails it warns once and runs eager. Compiled kernels sum in another order, so outputs differ from eager
    by fp32 rounding, which the bf16 RoPE rounding can amplify as in docs/differences.md#golden-vectors.
    """
    #: A model holding this backbone loads its weights strictly through mmpose's, mmseg's and MMEngine's APIs too
    #: (read by :mod:`sapiens2.adaptations`, which does not import the models).
    sapiens2_loads_strictly = True

    def __init__(self,
                 arch: Union[str, dict] = 'sapiens2_1b',
                 img_size: Union[int, Sequence[int]] = (1024, 768),
                 patch_size: int = 16,
                 in_channels: int = 3,
                 out_indices: Union[int, Sequence[int]] = -1,
                 drop_rate: float = 0.0,
                 window_size: int = 4,
                 use_tokenizer: bool = False,
                 use_qk_norm: bool = True,
                 qkv_bias: bool = True,
                 final_norm: bool = True,
                 out_type: str = 'raw',
                 with_cls_token: bool = True,
                 layer_scale_init_value: float = 1e-4,
                 frozen_stages: int = -1,
                 patch_cfg: Optional[dict] = None,
                 layer_cfgs: Union[dict, Sequence[dict], None] = None,
                 pos_embed_rope_base: Optional[float] = 100.0,
                 pos_embed_rope_min_period: Optional[float] = None,
                 pos_embed_rope_max_period: Optional[float] = None,
                 pos_embed_rope_normalize_coords: str = 'separate',
                 pos_embed_rope_shift_coords: Optional[float] = None,
                 pos_embed_rope_jitter_coords: Optional[float] = None,
                 pos_embed_rope_rescale_coords: Optional[float] = None,
                 pos_embed_rope_dtype: str = 'bf16',
                 n_storage_tokens: int = 8,
                 with_cp: bool = False,
                 ffn_chunk_tokens: Optional[int] = None,
                 fuse_qkv: bool = False,
                 compile: bool = False,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(init_cfg=init_cfg)
        settings = resolve_arch(arch)
        self.embed_dims = settings['embed_dims']
        self.num_layers = settings['num_layers']
        self.num_heads = settings['num_heads']
        if out_type not in OUT_TYPES:
            raise ValueError(f'out_type must be one of {OUT_TYPES}, got {out_type!r}.')
        self.out_type = out_type
        self.patch_size = patch_size
        self.in_channels = in_channels
        self.window_size = window_size
        self.use_tokenizer = use_tokenizer
        self.img_size = _to_hw(img_size)
        self._check_input_size(self.img_size, 'img_size')
        stride = patch_size * (window_size if use_tokenizer else 1)
        self.patch_resolution = (self.img_size[0] // stride, self.img_size[1] // stride)
        self.final_norm = final_norm
        self.with_cls_token = with_cls_token
        self.n_storage_tokens = n_storage_tokens
        self.num_extra_tokens = n_storage_tokens + int(with_cls_token)
        self.with_cp = with_cp
        self.fuse_qkv = fuse_qkv
        self.block_runner = CompiledBlockRunner() if compile else None
        self.frozen_stages = frozen_stages
        self.out_indices = self._resolve_out_indices(out_indices)

        self.cls_token = nn.Parameter(torch.zeros(1, 1, self.embed_dims)) if with_cls_token else None
        self.storage_tokens = nn.Parameter(torch.zeros(1, n_storage_tokens, self.embed_dims))
        self.patch_embed = PatchEmbed(in_channels, self.embed_dims, patch_size, **(patch_cfg or {}))
        self.rope_embed = RopePositionEmbedding(
            self.embed_dims, self.num_heads, base=pos_embed_rope_base, min_period=pos_embed_rope_min_period,
            max_period=pos_embed_rope_max_period, normalize_coords=pos_embed_rope_normalize_coords,
            shift_coords=pos_embed_rope_shift_coords, jitter_coords=pos_embed_rope_jitter_coords,
            rescale_coords=pos_embed_rope_rescale_coords, dtype=rope_dtype_from_name(pos_embed_rope_dtype))
        if ffn_chunk_tokens is None:
            ffn_chunk_tokens = TOKENIZER_FFN_CHUNK_TOKENS if use_tokenizer else 0
        ffn_chunk_tokens = ffn_chunk_tokens or None
        self.tokenizer = WindowTokenizer(
            self.embed_dims, self.num_heads, settings['feedforward_channels'], settings['num_tokenizer_layers'],
            window_size, qkv_bias, ffn_chunk_tokens=ffn_chunk_tokens) if use_tokenizer else None
        self.drop_after_pos = nn.Dropout(drop_rate)
        self.blocks = nn.ModuleList([
            TransformerBlock(self.embed_dims, self.num_heads, settings['feedforward_channels'],
                             qkv_bias=qkv_bias, use_qk_norm=use_qk_norm,
                             layer_scale_init_value=layer_scale_init_value, ffn_chunk_tokens=ffn_chunk_tokens, **cfg)
            for cfg in self._block_cfgs(layer_cfgs)
        ])
        self.ln1 = RMSNorm(self.embed_dims, eps=1e-6) if final_norm else nn.Identity()
        self._freeze_stages()

    # ----------------------------------------------------------------------------------------------------- setup
    def _check_input(self, x: torch.Tensor) -> None:
        """Input layout and dtype, then size: ``ValueError`` saying what to change."""
        problems = []
        if x.dim() != 4:
            problems.append(f'a (N, C, H, W) batch is expected, got shape {tuple(x.shape)}' +
                            (' (add the batch dimension: x[None])' if x.dim() == 3 else ''))
        elif x.shape[1] != self.in_channels:
            layout = ('; it looks channels-last (N, H, W, C): use x.permute(0, 3, 1, 2)'
                      if x.shape[3] == self.in_channels else '')
            problems.append(f'{self.in_channels} channels are expected in dim 1 of (N, C, H, W), got shape '
                            f'{tuple(x.shape)}{layout}')
        if not x.is_floating_point():
            problems.append(f'the dtype is {x.dtype}: the backbone takes float images normalised as the data '
                            "preprocessor does ((x.float() - mean) / std with the config's mean/std), not raw pixels")
        if problems:
            raise ValueError('Sapiens2 input: ' + '; '.join(problems) + '.')
        self._check_input_size((x.shape[2], x.shape[3]), 'input size')

    def _check_input_size(self, size: Tuple[int, int], what: str) -> None:
        multiple = self.patch_size * (self.window_size if self.use_tokenizer else 1)
        if size[0] % multiple or size[1] % multiple:
            detail = f'patch_size x window_size = {multiple} (4K tokenizer)' if self.use_tokenizer \
                else f'patch_size = {multiple}'
            raise ValueError(f'Sapiens2 {what} (H, W) = {tuple(size)} must be multiples of {detail}; '
                             f'resize or pad the image, e.g. to '
                             f'({-(-size[0] // multiple) * multiple}, {-(-size[1] // multiple) * multiple}).')

    def _resolve_out_indices(self, out_indices: Union[int, Sequence[int]]) -> List[int]:
        indices = [out_indices] if isinstance(out_indices, int) else list(out_indices)
        resolved = []
        for index in indices:
            if not -self.num_layers <= index < self.num_layers:
                raise ValueError(f'out_indices entry {index} is out of range for {self.num_layers} blocks '
                                 f'(valid: {-self.num_layers}..{self.num_layers - 1}).')
            resolved.append(index % self.num_layers)
        return resolved

    def _block_cfgs(self, layer_cfgs: Union[dict, Sequence[dict], None]) -> List[dict]:
        if layer_cfgs is None or isinstance(layer_cfgs, dict):
            layer_cfgs = [dict(layer_cfgs or {}) for _ in range(self.num_layers)]
        elif len(layer_cfgs) != self.num_layers:
            raise ValueError(f'layer_cfgs has {len(layer_cfgs)} entries but the arch has {self.num_layers} blocks.')
        cfgs = []
        for index, cfg in enumerate(layer_cfgs):
            cfg = dict(cfg)
            if 'num_kv_heads' not in cfg:
                in_middle = MHSA_EDGE_BLOCKS <= index < self.num_layers - MHSA_EDGE_BLOCKS
                cfg['num_kv_heads'] = self.num_heads // 2 if in_middle else self.num_heads
            cfgs.append(cfg)
        return cfgs

    def _freeze_stages(self) -> None:
        if self.frozen_stages <= 0:
            return
        frozen: List[nn.Module] = [self.patch_embed] + ([self.tokenizer] if self.tokenizer is not None else [])
        frozen += list(self.blocks[:self.frozen_stages])
        if self.frozen_stages == self.num_layers:
            frozen.append(self.ln1)
        for module in frozen:
            module.eval()
            for param in module.parameters():
                param.requires_grad = False
        for param in (self.cls_token, self.storage_tokens):
            if param is not None:
                param.requires_grad = False

    def quantize_int8(self, compile: bool = True, kernel: Optional[str] = None) -> None:
        """Put the blocks' linear layers in int8 (:mod:`..layers.int8_linear`), in place; for CPU inference only.

        ``kernel``: ``'int_mm'`` or ``'fbgemm'``, by default the one this CPU runs
        (:func:`sapiens2.utils.devices.int8_kernel`: per-token ``int_mm`` with VNNI or AMX, ``fbgemm`` on AVX2).
        ``int_mm`` runs the blocks compiled (eager it is slower than bf16; ``compile=False`` for accuracy checks);
        ``fbgemm`` is fast eager and is not compiled."""
        kernel = kernel or int8_kernel() or 'int_mm'
        quantize_linears(self.blocks, kernel)
        self.fuse_qkv = False  # the fused q/k/v weight is float; the int8 layers quantize q, k and v themselves
        if compile and kernel == 'int_mm':
            self.compile_blocks()

    def compile_blocks(self) -> None:
        """Run the blocks through ``torch.compile`` from now on, as ``compile=True`` does (compiled at the next
        call: seconds to a minute); in place."""
        if self.block_runner is None:
            self.block_runner = CompiledBlockRunner()

    def train(self, mode: bool = True) -> 'Sapiens2':
        super().train(mode)
        self._freeze_stages()
        return self

    def init_weights(self) -> None:
        """The official random init, then the ``init_cfg`` entries (one dict or a list): any MMEngine initializer
        type (``Constant``, ``TruncNormal``..., via MMEngine's ``initialize``), and last a ``Pretrained`` checkpoint
        loaded by sapiens2's loader (strict unless ``strict=False``; optional ``prefix``, ``map_location``,
        ``allow_non_finite_weights``)."""
        cfgs = [self.init_cfg] if isinstance(self.init_cfg, dict) else list(self.init_cfg or [])
        pretrained = [cfg for cfg in cfgs if cfg.get('type') in ('Pretrained', PretrainedInit)]
        others = [cfg for cfg in cfgs if cfg.get('type') not in ('Pretrained', PretrainedInit)]
        if len(pretrained) > 1:
            raise ValueError(f'Sapiens2 init_cfg has {len(pretrained)} Pretrained entries; give one checkpoint.')
        self._random_init()
        if others:
            initialize(self, others)
        if pretrained:
            self._load_pretrained(pretrained[0])
        self._is_init = True

    def _load_pretrained(self, cfg: dict) -> None:
        unknown = set(cfg) - PRETRAINED_KEYS
        if unknown or 'checkpoint' not in cfg:
            raise ValueError(f'Sapiens2 init_cfg Pretrained takes {sorted(PRETRAINED_KEYS)} (checkpoint required), '
                             f'got {sorted(cfg)}.')
        from sapiens2.engine.checkpoint import load_model_weights
        load_model_weights(self, cfg['checkpoint'], strict=cfg.get('strict', True), prefix=cfg.get('prefix'),
                           map_location=cfg.get('map_location', 'cpu'),
                           allow_non_finite_weights=cfg.get('allow_non_finite_weights'))

    def _random_init(self) -> None:
        for param in (self.cls_token, self.storage_tokens):
            if param is not None:
                nn.init.trunc_normal_(param, std=0.02)
        if self.tokenizer is not None:
            nn.init.trunc_normal_(self.tokenizer.local_pos_embed, std=0.02)
            nn.init.trunc_normal_(self.tokenizer.w_cls, std=0.02)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Conv2d)):
                nn.init.trunc_normal_(module.weight, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, (nn.RMSNorm, nn.LayerNorm)) and module.weight is not None:
                nn.init.ones_(module.weight)
            elif isinstance(module, LayerScale):
                module.reset_parameters()

    # --------------------------------------------------------------------------------------------------- forward
    def _prefix_tokens(self, batch: int) -> torch.Tensor:
        tokens = [self.storage_tokens.expand(batch, -1, -1)]
        if self.cls_token is not None:
            tokens.insert(0, self.cls_token.expand(batch, -1, -1))
        return torch.cat(tokens, dim=1)

    @staticmethod
    def _keep_indices_from_mask(keep_mask: torch.Tensor) -> torch.Tensor:
        counts = keep_mask.sum(dim=1)
        if not bool((counts == counts[0]).all()):
            raise ValueError('keep_mask must keep the same number of tokens in every sample.')
        return keep_mask.nonzero()[:, 1].view(keep_mask.shape[0], -1)

    def _format(self, x: torch.Tensor, grid: Tuple[int, int], sparse: bool) -> torch.Tensor:
        if self.out_type == 'raw':
            return x
        if self.out_type == 'cls_token':
            if self.cls_token is None:
                raise ValueError("out_type='cls_token' needs with_cls_token=True.")
            return x[:, 0]
        if sparse:
            raise ValueError("out_type='featmap' needs every patch token; use 'raw' with keep_indices/keep_mask.")
        patches = x[:, self.num_extra_tokens:]
        return patches.reshape(x.shape[0], grid[0], grid[1], -1).permute(0, 3, 1, 2).contiguous()

    def forward(self,
                x: torch.Tensor,
                keep_indices: Optional[torch.Tensor] = None,
                keep_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, ...]:
        self._check_input(x)
        if self.tokenizer is not None:  # patch-embeds and tokenizes band by band: (B, Hp/w * Wp/w, C)
            tokens, grid = self.tokenizer(x, self.patch_embed)
        else:
            tokens, grid = self.patch_embed(x)  # (B, Hp*Wp, C)
        if keep_mask is not None:
            keep_indices = self._keep_indices_from_mask(keep_mask)
        sparse = keep_indices is not None
        if sparse:
            tokens = torch.gather(tokens, 1, keep_indices[..., None].expand(-1, -1, tokens.shape[-1]))
        rope = self.rope_embed.tokens(grid[0], grid[1], self.num_extra_tokens, keep_indices)
        x = self.drop_after_pos(torch.cat((self._prefix_tokens(tokens.shape[0]), tokens), dim=1))

        outs = []
        fused = self.fuse_qkv and not torch.is_grad_enabled()
        run = self.block_runner or TransformerBlock.__call__
        for index, block in enumerate(self.blocks):
            if self.with_cp and self.training and torch.is_grad_enabled():
                x = checkpoint(run, block, x, rope, use_reentrant=False)
            else:
                x = run(block, x, rope, block.attn.fused_qkv() if fused else None)
            if index == self.num_layers - 1:
                x = self.ln1(x)
            if index in self.out_indices:
                outs.append(self._format(x, grid, sparse))
        return tuple(outs)
