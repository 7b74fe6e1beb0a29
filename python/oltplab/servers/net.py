"""Loopback ports: picking a free one, and seeing which addresses a port listens on."""

import ipaddress
import socket
import sys
from pathlib import Path

LOOPBACK = "127.0.0.1"
_TCP_LISTEN = "0A"  # the state column of /proc/net/tcp


def free_loopback_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 now. Another process may take it before
    the server binds it: callers retry with a new port when the server reports it in use."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        port: int = s.getsockname()[1]
        return port


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on `port` (Linux: from /proc/net)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, port_hex = fields[1].partition(":")
            if fields[3] == _TCP_LISTEN and int(port_hex, 16) == port:
                found.add(_decode_address(address))
    return found


def _decode_address(hex_address: str) -> str:
    # The kernel prints each 32-bit word of the address in host byte order.
    raw = bytes.fromhex(hex_address)
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(raw))
