"""PyTorch ``.pt`` containers: zip, legacy stream, tar, TorchScript (spec/pt-zip.md, spec/pt-legacy.md,
spec/pt-tar.md, spec/torchscript.md)."""
