"""`oltplab server start|stop|status|list`: managed MariaDB/PostgreSQL servers in private
directories (docs/servers.md), the same kind of directory a lab keeps under DIR/servers/."""

import json
from pathlib import Path

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import AnalysisParser
from oltplab.exceptions import ConfigError
from oltplab.redact import redact_url
from oltplab.servers import SERVER_CLASSES, ManagedServer, ServerSettings, create_server
from oltplab.servers.settings import ConfigValue
from oltplab.servers.state import STATE_FILE, read_state

_USAGE = "oltplab server start|stop|status|list ..."


def parse_value(text: str) -> ConfigValue:
    """A --set value: integers and numbers as such, on/off/true/false as booleans."""
    lowered = text.lower()
    if lowered in ("true", "on"):
        return True
    if lowered in ("false", "off"):
        return False
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def parse_sets(items: list[str]) -> dict[str, ConfigValue]:
    variables: dict[str, ConfigValue] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--set {item!r}: write it as --set name=value")
        variables[name.strip()] = parse_value(value.strip())
    return variables


def _url(server: ManagedServer) -> str | None:
    return server.redacted_url if server.settings.port is not None else None


def server_status(server: ManagedServer) -> dict[str, object]:
    """`oltplab server status --json`."""
    pid = server.pid()
    return {
        "dir": str(server.base_dir),
        "engine": server.engine,
        "running": pid is not None,
        "pid": pid,
        "url": _url(server),
        "socket_url": redact_url(server.socket_url) if server.settings.port is not None else None,
        "max_connections": server.settings.max_connections,
        "variables": dict(server.settings.variables),
        "log": str(server.log_file),
    }


def _open(base_dir: Path) -> ManagedServer:
    from oltplab.servers import open_server

    return open_server(base_dir)


def _start(args: list[str]) -> int:
    p = AnalysisParser(prog="oltplab server start", description="Start a managed server.")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.add_argument("--engine", choices=sorted(SERVER_CLASSES), help="new servers: which one")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="sets")
    p.add_argument("--max-connections", type=int)
    p.add_argument("--cpus", help="CPU list to pin the server to, e.g. 0 or 0-1")
    ns = p.parse_args(args)
    stored = read_state(ns.dir)
    engine = ns.engine or (stored[0] if stored else None)
    if engine is None:
        raise ConfigError(f"{ns.dir} holds no server yet; give --engine mariadb|postgresql")
    variables = parse_sets(ns.sets)
    base = stored[1] if stored else ServerSettings()
    settings = ServerSettings(
        max_connections=ns.max_connections or base.max_connections,
        variables=variables if ns.sets or stored is None else base.variables,
    )
    from oltplab.servers.pinning import cpus_allowed_list, parse_cpu_list, pin_session

    cpus = parse_cpu_list(ns.cpus) if ns.cpus else None  # a bad list fails before the start
    server = create_server(engine, ns.dir, settings)
    server.start()
    try:
        pid = server.pid()
        if cpus is not None and pid is not None:
            pin_session(pid, cpus)
            print(f"pinned to CPUs {cpus_allowed_list(pid)}")
        print(server.redacted_url)
        print(redact_url(server.socket_url))
    finally:
        server.detach()  # it runs on after this command; `oltplab server stop DIR` stops it
    return exitcodes.OK


def _stop(args: list[str]) -> int:
    p = AnalysisParser(prog="oltplab server stop", description="Stop a managed server.")
    p.add_argument("dir", type=Path, metavar="DIR")
    ns = p.parse_args(args)
    _open(ns.dir).stop()
    return exitcodes.OK


def _status(args: list[str]) -> int:
    p = AnalysisParser(prog="oltplab server status", description="A managed server's state.")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.add_argument("--json", action="store_true")
    ns = p.parse_args(args)
    server = _open(ns.dir)
    pid = server.pid()
    if ns.json:
        print(json.dumps(server_status(server), indent=2))
    else:
        state = f"running (pid {pid})" if pid is not None else "stopped"
        print(f"{server.engine} in {server.base_dir}: {state}, {_url(server)}")
    return exitcodes.OK if pid is not None else exitcodes.FAILED


def _list(args: list[str]) -> int:
    p = AnalysisParser(prog="oltplab server list", description="Managed servers under ROOT.")
    p.add_argument("root", type=Path, nargs="?", default=Path.cwd(), metavar="ROOT")
    p.add_argument("--json", action="store_true")
    ns = p.parse_args(args)
    # A lab keeps its servers two levels down (LAB/servers/NAME): look three deep.
    found = sorted(
        {f.parent for depth in ("*/", "*/*/", "*/*/*/") for f in ns.root.glob(depth + STATE_FILE)}
        | ({ns.root} if (ns.root / STATE_FILE).is_file() else set())
    )
    servers = [_open(d) for d in found]
    if ns.json:
        print(json.dumps([server_status(server) for server in servers], indent=2))
    for server in [] if ns.json else servers:
        state = "running" if server.pid() is not None else "stopped"
        print(f"{server.base_dir}\t{server.engine}\t{state}\t{_url(server)}")
    return exitcodes.OK


_VERBS = {"start": _start, "stop": _stop, "status": _status, "list": _list}


def main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        print(f"usage: {_USAGE}\n\n  start DIR --engine mariadb|postgresql [--set NAME=VALUE]...")
        print("  stop DIR\n  status DIR [--json]\n  list [ROOT] [--json]")
        return exitcodes.OK if args else exitcodes.BAD_INPUT
    verb = _VERBS.get(args[0])
    if verb is None:
        raise ConfigError(f"unknown server command '{args[0]}'; choose one of: {', '.join(_VERBS)}")
    return verb(args[1:])
