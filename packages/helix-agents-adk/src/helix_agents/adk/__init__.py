"""Google ADK session service on any helix-agents session store."""
