"""A child process that migrates a schema, for the many-processes test.

``python postgres_child.py URL SCHEMA``: connects (not in autocommit), prints
``ready``, waits for one line on stdin so that a parent can release many
children at once, runs ``migrate`` and prints the versions it applied as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

import psycopg

from helix_agents.store_postgres import migrate


async def main(url: str, schema: str) -> list[int]:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        return await migrate(conn, schema)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))), flush=True)
