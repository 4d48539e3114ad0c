"""Fixtures for the suite's own tests."""

pytest_plugins = ["pytester"]
