"""LangGraph checkpointer over any helix-agents session store."""
