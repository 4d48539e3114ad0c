"""Plugins of the repository's own runs: pytester for the suite's tests, and the contract
plugin, which ends each run with the state machine's step counts."""

pytest_plugins = ["pytester", "helix_agents.contract.plugin"]
