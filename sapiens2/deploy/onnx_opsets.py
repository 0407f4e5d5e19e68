"""The ONNX opsets the exports write, without torch (``tools/deploy/export.py --help`` lists them)."""

#: ONNX opset of the exports. From opset 23 on, the exporter writes attention as one ``Attention`` node and RMSNorm as
#: one ``RMSNormalization`` node (on a 2-core CPU the 0.4b task models at 1024x768 run 0.99-1.10x the speed of the
#: opset-18 graph, docs/performance.md); opset 18 writes both as primitive ops, for runtimes without opset 23.
ONNX_OPSETS = (18, 23)
DEFAULT_OPSET = 23
