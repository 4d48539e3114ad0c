"""A LangGraph graph that remembers a user's preference across threads, in any store.

The graph's one node reads what the user says; "I like …" is saved to LangGraph's
long-term memory, ``HelixMemoryStore``, under ``("users", <user>, "prefs")``, and every
turn answers from that memory. Two threads share it, and so do two processes: the
memory lives in the store, not in the graph::

    uv run python examples/langgraph_memory.py sqlite:///memory.db ada learn
    uv run python examples/langgraph_memory.py sqlite:///memory.db ada recall

``learn`` tells the graph a preference on thread ``<user>-monday``; ``recall`` asks on a
new thread, ``<user>-tuesday``, and prints the answer and what memory holds. Any store
URL works (``postgresql://…?auto_migrate=true``, ``redis://…``); ``both`` runs the two
steps one after the other in one process, each on a store opened afresh. Without
arguments, the two steps run as two processes on ``./helix-langgraph-memory.db``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from collections.abc import Sequence

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from helix_agents.core import open_store
from helix_agents.langgraph import HelixCheckpointSaver, HelixMemoryStore

DEMO_URL = "sqlite:///helix-langgraph-memory.db"
SAID = {"learn": "I like green tea", "recall": "What do I like to drink?"}


async def answer(
    state: MessagesState, config: RunnableConfig, *, store: BaseStore
) -> dict[str, list[tuple[str, str]]]:
    """Remember an "I like …", then answer from memory (a model call would go here)."""
    user = config["configurable"]["user"]
    where = ("users", user, "prefs")
    said = str(state["messages"][-1].content)
    if said.startswith("I like "):
        await store.aput(where, "drink", {"likes": said.removeprefix("I like ")})
        print(f"remembered in {where}: {said.removeprefix('I like ')}")
    found = await store.aget(where, "drink")
    reply = f"You like {found.value['likes']}." if found else "I don't know yet."
    return {"messages": [("assistant", reply)]}


builder = StateGraph(MessagesState)
builder.add_node(answer)
builder.add_edge(START, "answer")


async def run(url: str, user: str, step: str) -> None:
    """One turn of ``step`` on its own thread, then what memory holds for ``user``."""
    async with open_store(url) as store:
        memory = HelixMemoryStore(store)
        graph = builder.compile(checkpointer=HelixCheckpointSaver(store), store=memory)
        thread = f"{user}-{'monday' if step == 'learn' else 'tuesday'}"
        config: RunnableConfig = {"configurable": {"thread_id": thread, "user": user}}
        print(f"{thread}: user: {SAID[step]}")
        out = await graph.ainvoke({"messages": [HumanMessage(SAID[step])]}, config)
        print(f"{thread}: ai: {out['messages'][-1].content}")
        held = await memory.asearch(("users", user))
        print(f"memory of {user}: {[(it.key, it.value) for it in held]}")


def main(argv: Sequence[str]) -> None:
    """Parse the command line and run one step (or, without arguments, both as processes)."""
    if not argv:
        for step in ("learn", "recall"):
            subprocess.run([sys.executable, __file__, DEMO_URL, "ada", step], check=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("url", help="store URL, e.g. sqlite:///memory.db")
    parser.add_argument("user", help="whose memory")
    parser.add_argument("step", choices=["learn", "recall", "both"])
    args = parser.parse_args(argv)
    for step in ("learn", "recall") if args.step == "both" else (args.step,):
        asyncio.run(run(args.url, args.user, step))


if __name__ == "__main__":
    main(sys.argv[1:])
