"""Lua Torch ``.t7`` object streams (spec/t7.md)."""
