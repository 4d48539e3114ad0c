"""Benchmarks of the helix-agents session stores beside the stores users would pick instead.

Run ``python -m bench`` (``--quick`` for the short mode); see ``docs/performance.md``.
"""
