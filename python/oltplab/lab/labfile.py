"""Reads a lab file (TOML) into a LabSpec, checking every key, type and name before anything
starts. Errors are one line: `FILE:LINE: KEY: what is wrong; how to fix it`."""

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast, get_args

from oltplab.catalog import Catalog
from oltplab.documents.lab import LabSpec, Order, Restore, ServerSpec, WorkloadSpec
from oltplab.exceptions import ConfigError, OltpLabError
from oltplab.lab.labfile_values import (
    LabFileError,
    Reader,
    choice,
    integer,
    is_name,
    metric_list,
    number,
    positive_ints,
    positive_numbers,
    scalar_table,
    show,
    string,
)
from oltplab.lab.ray_client import CLIENT_KEYS, read_client_ray
from oltplab.lab.script import ScriptOptions, describe_url, file_sha256, script_file
from oltplab.lab.tomlwhere import Path_
from oltplab.metrics import METRIC_KINDS
from oltplab.servers import SERVER_CLASSES

EXTERNAL = "external"
ENGINES = (*SERVER_CLASSES, EXTERNAL)
DEFAULT_CONFIG = "default"
# Options the lab sets itself for every cell: they belong in [lab] or the workload's lists.
_LAB_OWNED = {
    "threads": "threads = [...]",
    "rate": "rate = [...]",
    "time": "[lab] time",
    "warmup_time": "[lab] warmup_time",
    "report_interval": "[lab] report_interval",
}


_TOP = {
    "lab": "the lab",
    "client": "the client",
    "servers": "servers",
    "workloads": "workloads",
    "scales": "scales",
}
# [scales.NAME]: a smaller (or larger) version of the same lab, chosen with --scale NAME.
_SCALE = {
    k: k for k in ("time", "warmup_time", "repeats", "cooldown", "threads", "rate", "options")
}
_LAB = {
    k: k
    for k in (
        "name",
        "time",
        "warmup_time",
        "repeats",
        "order",
        "seed",
        "restore",
        "cooldown",
        "report_interval",
        "metrics",
    )
}
_CLIENT = {"cpus": "CPU list", **CLIENT_KEYS}
_MAX_CONNECTIONS = "max_connections"
_SERVER = {k: k for k in ("engine", "url", "cpus", _MAX_CONNECTIONS, "settings", "configs")}
_WORKLOAD = {k: k for k in ("name", "script", "label", "threads", "rate", "options")}


def _apply_scale(r: Reader, doc: dict[str, Any], scale: str | None) -> None:
    """Overlays [scales.NAME] on [lab] and every [[workloads]] (in place)."""
    scales = doc.get("scales", {})
    if not isinstance(scales, dict):
        raise r.fail(("scales",), "must be a table of scales, [scales.NAME]")
    for name, raw in scales.items():
        r.table(raw, ("scales", name), _SCALE)
    if scale is None:
        return
    if scale not in scales:
        known = ", ".join(scales) or "none"
        raise LabFileError(f"{r.source}: no [scales.{scale}] in the lab file (it has: {known})")
    chosen = scales[scale]
    lab = doc.setdefault("lab", {})
    for key in ("time", "warmup_time", "repeats", "cooldown"):
        if key in chosen and isinstance(lab, dict):
            lab[key] = chosen[key]
    for w in doc.get("workloads", []) if isinstance(doc.get("workloads"), list) else []:
        if not isinstance(w, dict):
            continue
        for key in ("threads", "rate"):
            if key in chosen and key in w:
                w[key] = chosen[key]
        if isinstance(chosen.get("options"), dict) and isinstance(w.get("options", {}), dict):
            w["options"] = dict(w.get("options", {})) | chosen["options"]


def read_lab_text(
    text: str, source: str, catalog: Catalog | None = None, scale: str | None = None
) -> LabSpec:
    """Parses and checks a lab file's text; `source` names it in errors; `scale` picks a
    [scales.NAME] overlay."""
    r = Reader(source, text, catalog)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = re.search(r"line (\d+)", str(e))
        raise LabFileError(
            f"{source}:{line.group(1) if line else 1}: not valid TOML: {e}"
        ) from None
    r.table(doc, (), _TOP)
    _apply_scale(r, doc, scale)
    lab = r.table(doc.get("lab", {}), ("lab",), _LAB)
    if "lab" not in doc:
        raise r.fail((), 'needs a [lab] table with at least name = "..."')
    client = r.table(doc.get("client", {}), ("client",), _CLIENT)
    name = r.name(
        ("lab", "name"), r.get(lab, ("lab",), "name", string, "a string", required=True), "lab name"
    )
    metrics = r.get(
        lab, ("lab",), "metrics", metric_list, f"a list of {METRIC_KINDS}", list(METRIC_KINDS)
    )
    servers = _servers(r, doc)
    workloads = _workloads(r, doc, servers)
    client_ray, client_clients = read_client_ray(r, client, servers, workloads)
    return LabSpec(
        name=name,
        time_s=r.get(lab, ("lab",), "time", number(0, True), "seconds > 0", 60.0),
        warmup_time_s=r.get(lab, ("lab",), "warmup_time", number(0, False), "seconds >= 0", 0.0),
        repeats=r.get(lab, ("lab",), "repeats", integer(1), "an integer >= 1", 1),
        order=cast(
            Order,
            r.get(
                lab,
                ("lab",),
                "order",
                choice(get_args(Order)),
                f"one of {get_args(Order)}",
                "interleaved",
            ),
        ),
        seed=r.get(lab, ("lab",), "seed", integer(0), "an integer >= 0", 1),
        restore=cast(
            Restore,
            r.get(
                lab,
                ("lab",),
                "restore",
                choice(get_args(Restore)),
                f"one of {get_args(Restore)}",
                "auto",
            ),
        ),
        cooldown_s=r.get(lab, ("lab",), "cooldown", number(0, False), "seconds >= 0", 0.0),
        report_interval_s=r.get(
            lab, ("lab",), "report_interval", number(0, True), "seconds > 0", 1.0
        ),
        metrics=tuple(metrics),
        client_cpus=_cpus(r, client, ("client",)),
        servers=servers,
        workloads=workloads,
        client_ray=client_ray,
        client_clients=client_clients,
    )


def _cpus(r: Reader, doc: Mapping[str, Any], path: Path_) -> str | None:
    from oltplab.servers.pinning import parse_cpu_list

    cpus = r.get(doc, path, "cpus", string, 'a CPU list such as "0" or "0-1"')
    if cpus is not None:
        try:
            parse_cpu_list(cpus)
        except ConfigError as e:
            raise r.fail((*path, "cpus"), str(e)) from None
    return cpus


def _servers(r: Reader, doc: Mapping[str, Any]) -> tuple[ServerSpec, ...]:
    servers = doc.get("servers")
    if servers is None or servers == {}:
        raise r.fail((), 'needs at least one [servers.NAME] table (engine = "mariadb", ...)')
    if not isinstance(servers, dict):
        raise r.fail(("servers",), "must be a table of servers, [servers.NAME]")
    out = []
    for name, raw in servers.items():
        path: Path_ = ("servers", name)
        r.name(path, name, "server name")
        s = r.table(raw, path, _SERVER)
        engine = r.get(s, path, "engine", choice(ENGINES), f"one of {ENGINES}", required=True)
        url = r.get(s, path, "url", string, "a database URL")
        if engine == EXTERNAL and url is None:
            raise r.fail(path, 'an external server needs url = "mysql://..." or "postgresql://..."')
        if engine != EXTERNAL and url is not None:
            raise r.fail(
                (*path, "url"), "only an external server takes a url; managed ones have their own"
            )
        settings: dict[str, Any] = r.get(
            s, path, "settings", scalar_table, "a table of name = value", {}
        )
        configs_raw: dict[str, Any] = r.get(
            s,
            path,
            "configs",
            lambda v: v if isinstance(v, dict) else None,
            "a table of configs",
            {},
        )
        if engine == EXTERNAL and (settings or configs_raw):
            raise r.fail(
                path,
                "an external server cannot be configured by the lab: remove settings and configs",
            )
        configs: dict[str, dict[str, Any]] = {}
        for cname, cvars in configs_raw.items():
            cpath: Path_ = (*path, "configs", cname)
            r.name(cpath, cname, "config name")
            checked = scalar_table(cvars)
            if checked is None:
                raise r.fail(cpath, "must be a table of server variables, name = value")
            configs[cname] = checked
        max_conn = _max_connections(
            r, path, r.get(s, path, "max_connections", integer(1), "an integer >= 1"), settings
        )
        _check_variables(r, engine, path, settings, configs)
        out.append(
            ServerSpec(
                name=name,
                engine=engine,
                url=url,
                cpus=_cpus(r, s, path),
                max_connections=max_conn,
                settings=settings,
                configs=configs or {DEFAULT_CONFIG: {}},
            )
        )
    return tuple(out)


def _max_connections(
    r: Reader, path: Path_, given: int | None, settings: dict[str, Any]
) -> int | None:
    """`max_connections` written among the server's variables (`settings`, where people write
    server variables) is the server's `max_connections`: taken out of `settings` (oltplab sets
    the variable itself, from this one value, which also sizes the lab's pre-flight checks)."""
    key = next((k for k in settings if k.replace("-", "_") == _MAX_CONNECTIONS), None)
    if key is None:
        return given
    raw = settings.pop(key)
    value = integer(1)(int(raw) if isinstance(raw, str) and raw.isdigit() else raw)
    if value is None:
        raise r.fail((*path, "settings", key), f"must be an integer >= 1, not {show(raw)}")
    if given is not None and given != value:
        raise r.fail(
            (*path, "max_connections"),
            f"{given} here but {value} in settings: set max_connections in one place",
        )
    return value


def _check_variables(
    r: Reader,
    engine: str,
    path: Path_,
    settings: dict[str, Any],
    configs: dict[str, dict[str, Any]],
) -> None:
    from oltplab.servers.settings import check_variable

    cls = SERVER_CLASSES.get(engine)
    for where, variables in [((*path, "settings"), settings)] + [
        ((*path, "configs", c), v) for c, v in configs.items()
    ]:
        for key, value in variables.items():
            try:
                check_variable(key, value)
            except ConfigError as e:
                raise r.fail((*where, key), str(e)) from None
            if key.replace("-", "_") == _MAX_CONNECTIONS:  # only configs still hold it here
                raise r.fail(
                    (*where, key),
                    "is the server's, the same for every config (the lab sizes connections by "
                    f"it): set it in [servers.{path[1]}] settings",
                )
            if cls is not None and key.replace("-", "_") in cls.managed_variables:
                raise r.fail((*where, key), "oltplab sets this variable itself; remove it")


def _workloads(
    r: Reader, doc: Mapping[str, Any], servers: tuple[ServerSpec, ...]
) -> tuple[WorkloadSpec, ...]:
    raw = doc.get("workloads")
    if raw is None or raw == []:
        raise r.fail(
            (), 'needs at least one [[workloads]] table (name = "oltp_read_only", threads = [...])'
        )
    if not isinstance(raw, list):
        raise r.fail(("workloads",), "must be an array of tables: write [[workloads]]")
    hint = describe_url(servers)
    out: list[WorkloadSpec] = []
    for i, item in enumerate(raw):
        path: Path_ = ("workloads", i)
        w = r.table(item, path, _WORKLOAD)
        script = _script(r, w, path)
        name = script.stem if script else r.get(w, path, "name", string, "a name", required=True)
        if script is None and name not in r.catalog.names:
            raise r.fail(
                (*path, "name"),
                f"unknown workload {name!r}; choose one of: {', '.join(r.catalog.names)}",
            )
        label = r.get(w, path, "label", string, "a string")
        if label is not None:
            r.name((*path, "label"), label, "label")
        threads: list[int] = r.get(
            w, path, "threads", positive_ints, "a non-empty list of integers >= 1", []
        )
        rate: list[float] = r.get(
            w, path, "rate", positive_numbers, "a non-empty list of rates > 0", []
        )
        if not threads and not rate:
            raise r.fail(
                path, "needs threads = [N, ...] (closed loop) or rate = [R, ...] (open loop)"
            )
        if rate and len(threads) > 1:
            raise r.fail(
                (*path, "threads"), "with rate = [...], give at most one thread count (the pool)"
            )
        options: dict[str, Any] = r.get(
            w,
            path,
            "options",
            lambda v: dict(v) if isinstance(v, dict) else None,
            "a table of options",
            {},
        )
        _check_options(r, path, name, options, _script_options(r, path, script, hint))
        spec = WorkloadSpec(
            name=name,
            threads=tuple(threads),
            rate=tuple(rate),
            options=options,
            label=label,
            script=None if script is None else str(script),
            script_sha256=None if script is None else file_sha256(script),
        )
        if spec.label is None and not is_name(spec.key):
            r.name(path, spec.key, 'script name (or give it label = "...")')
        if any(o.key == spec.key for o in out):
            raise r.fail((*path, "name"), f'a second {spec.key!r}: give one of them label = "..."')
        out.append(spec)
    return tuple(out)


def _check_options(
    r: Reader, path: Path_, workload: str, options: dict[str, Any], script: ScriptOptions | None
) -> None:
    """Each option on its own, so an error names the very key that is wrong."""
    for key, value in options.items():
        owner = _LAB_OWNED.get(key.replace("-", "_"))
        if owner is not None:
            raise r.fail((*path, "options", key), f"the lab sets this for every cell: use {owner}")
        try:
            if script is None:
                r.catalog.resolve(workload, {key: value})
            else:
                script.check(key, value)
        except ConfigError as e:
            raise r.fail((*path, "options", key), str(e)) from None


def _script_options(
    r: Reader, path: Path_, script: Path | None, db_hint: str
) -> ScriptOptions | None:
    """The script's declared options (loading it: a script that does not load fails here)."""
    try:
        return None if script is None else ScriptOptions(str(script), db_hint)
    except OltpLabError as e:
        raise r.fail((*path, "script"), str(e).splitlines()[0]) from None


def _script(r: Reader, w: Mapping[str, Any], path: Path_) -> Path | None:
    """The script file a workload names, checked to exist (relative to the lab file)."""
    given = r.get(w, path, "script", string, "the path of a .lua file")
    if given is None:
        return None
    if "name" in w:
        raise r.fail(
            (*path, "name"),
            "a workload is a built-in (name) or a script (script), not both: remove one",
        )
    try:
        return script_file(r.source, given)
    except ConfigError as e:
        raise r.fail((*path, "script"), str(e)) from None


def read_lab_file(
    path: Path, catalog: Catalog | None = None, scale: str | None = None
) -> tuple[LabSpec, str]:
    """(the lab, the file's text); a one-line LabFileError when unreadable or invalid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabFileError(f"{path}: no such lab file; give the path of a .toml lab file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LabFileError(f"{path}: cannot read the lab file: {e}") from None
    return read_lab_text(text, str(path), catalog, scale), text
