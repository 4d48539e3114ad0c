"""The ``helix-store`` commands: thin typer wrappers around the modules that do the work."""

from __future__ import annotations

import enum
import logging
import sys
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Annotated

import typer

from ._check import check_store
from ._delete import delete_sessions, erase_user
from ._demo import write_demo
from ._errors import CliError, ExitCode, RedactingFormatter, fail, quiet_closed_pipe, run
from ._export import export_sessions
from ._import import import_file
from ._listing import list_sessions
from ._migrate import migrate_store
from ._show import show_session
from ._stats import store_stats

__all__ = ["app", "main"]

app = typer.Typer(
    name="helix-store",
    help="Inspect, move and check helix-agents session stores. See docs/cli.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
"""The typer application behind ``helix-store``: every command, for embedding or testing."""

Url = Annotated[
    str, typer.Argument(help="Store URL: sqlite:///x.db, postgresql://…, redis://…, memory://")
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of a table.")]
First = Annotated[int, typer.Option("--first", min=1, max=500, help="Page size.")]
Cursor = Annotated[str | None, typer.Option("--cursor", help="The cursor a previous page printed.")]

SessionIds = Annotated[
    list[str] | None, typer.Argument(help="Session ids (with --user: added to theirs).")
]
Users = Annotated[
    list[str] | None,
    typer.Option("--user", help="Every session of this user (repeat for more users)."),
]


class Order(enum.StrEnum):
    """Row order of ``show``."""

    asc = "asc"
    desc = "desc"


class _Settings:
    debug = False


def _print_version(value: bool) -> None:
    if value:
        try:
            print(f"helix-store {package_version('helix-agents-cli')}", flush=True)
        except BrokenPipeError:
            quiet_closed_pipe()
        raise typer.Exit()


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    _Settings.debug = debug
    if debug:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
        logging.basicConfig(level=logging.INFO, handlers=[handler])
    else:
        # Without a handler, Python prints library warnings (a pool's retries) on stderr.
        logging.getLogger().addHandler(logging.NullHandler())


@app.command()
def sessions(
    url: Url,
    user: Annotated[
        str | None,
        typer.Option("--user", help="Whose sessions to list (default: every session)."),
    ] = None,
    first: First = 20,
    cursor: Cursor = None,
    as_json: Json = False,
) -> None:
    """List a user's sessions (most recent activity first) or every session of the
    store (in id order, with its owner), a page at a time."""
    run(
        list_sessions(url, user, first=first, cursor=cursor, as_json=as_json),
        debug=_Settings.debug,
        url=url,
    )


@app.command()
def show(
    url: Url,
    session: Annotated[str, typer.Argument(help="The session's id.")],
    first: First = 50,
    cursor: Cursor = None,
    order: Annotated[Order, typer.Option(help="Oldest (asc) or newest (desc) first.")] = Order.asc,
    width: Annotated[
        int, typer.Option(min=10, help="Characters of each row's content shown.")
    ] = 60,
    as_json: Json = False,
) -> None:
    """Show a session and a page of its log; context rows are marked."""
    run(
        show_session(
            url,
            session,
            first=first,
            cursor=cursor,
            order=order.value,
            as_json=as_json,
            width=width,
        ),
        debug=_Settings.debug,
        url=url,
    )


@app.command()
def stats(
    url: Url,
    session: SessionIds = None,
    user: Users = None,
    as_json: Json = False,
) -> None:
    """Count sessions, rows, context rows, row bytes, records and activity of the scope."""
    run(
        store_stats(url, session or [], user or [], as_json=as_json), debug=_Settings.debug, url=url
    )


@app.command()
def migrate(
    url: Url,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only show the pending migrations.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Show the schema migrations a SQLite or Postgres store lacks and apply them."""
    run(migrate_store(url, dry_run=dry_run, as_json=as_json), debug=_Settings.debug, url=url)


@app.command("export")
def export_(url: Url, session: SessionIds = None, user: Users = None) -> None:
    """Write sessions and their records as JSON Lines on stdout (`> file.jsonl`)."""
    run(export_sessions(url, session or [], user or []), debug=_Settings.debug, url=url)


@app.command("import")
def import_(
    url: Url,
    file: Annotated[Path, typer.Argument(help="A file written by `helix-store export`.")],
    as_json: Json = False,
) -> None:
    """Import an export file; sessions already imported are left as they are."""
    run(import_file(url, file, as_json=as_json), debug=_Settings.debug, url=url)


@app.command()
def check(
    url: Url,
    select: Annotated[
        str | None, typer.Option("-k", help="Only the rules matching this pytest -k expression.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Show pytest's output.")] = False,
    as_json: Json = False,
) -> None:
    """Run the contract suite against the live store in throwaway namespaces."""
    try:
        code = check_store(url, select=select, verbose=verbose, as_json=as_json)
        sys.stdout.flush()
    except Exception as exc:
        fail(exc, debug=_Settings.debug, url=url)
    raise typer.Exit(code)


@app.command()
def delete(
    url: Url,
    session: SessionIds = None,
    user: Users = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    as_json: Json = False,
) -> None:
    """Delete sessions and everything they hold, after a confirmation (or --yes)."""
    run(
        delete_sessions(url, session or [], user or [], yes=yes, as_json=as_json),
        debug=_Settings.debug,
        url=url,
    )


@app.command("erase-user")
def erase_user_command(
    url: Url,
    user: Annotated[str, typer.Argument(help="The user whose data goes.", show_default=False)],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Erase without asking.")] = False,
    as_json: Json = False,
) -> None:
    """Erase everything of one user: every session and the user's scoped state."""
    run(erase_user(url, user, yes=yes, as_json=as_json), debug=_Settings.debug, url=url)


@app.command()
def demo(
    url: Annotated[
        str, typer.Argument(help="Where to write the demo session.")
    ] = "sqlite:///helix-demo.db",
) -> None:
    """Write a small demo session (rows, a context row, a checkpoint, an approval)."""
    run(write_demo(url), debug=_Settings.debug, url=url)


@app.command()
def serve(
    url: Url,
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")
    ] = 8765,
    write: Annotated[
        bool,
        typer.Option("--write", help="Offer the write actions (resolve, record, clear, delete)."),
    ] = False,
) -> None:
    """Inspect the store's sessions in a browser, on loopback; read-only unless --write."""
    try:
        from ._serve import serve_store
    except ImportError as exc:
        fail(
            CliError(
                f"serve needs the serve extra ({exc.name} is missing): "
                "pip install 'helix-agents-cli[serve]'",
                ExitCode.USAGE,
            ),
            debug=_Settings.debug,
        )
    run(serve_store(url, port=port, write=write), debug=_Settings.debug, url=url)


def main() -> None:
    """The ``helix-store`` console script."""
    try:
        app()
    except BrokenPipeError:
        # Output the command printed outside a store call (help, --version).
        quiet_closed_pipe()
