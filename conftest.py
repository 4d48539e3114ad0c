"""The repository's own runs print the state machine's step counts at the end."""

pytest_plugins = ["helix_agents.contract.plugin"]
