"""A plain WebSocket client of pods/exec, as client-go's v5 executor talks:
stdin sent on channel 0 and closed with v5's close signal, stdout and the
error channel read until the server closes. Prints what it saw as JSON.

Usage: websocket_exec.py PORT CA CERT KEY PATH [STDIN]
"""

import base64
import json
import os
import socket
import ssl
import struct
import sys

port, ca, cert, key, path = sys.argv[1:6]
stdin = sys.argv[6].encode() if len(sys.argv) > 6 else None
context = ssl.create_default_context(cafile=ca)
context.load_cert_chain(cert, key)
sock = context.wrap_socket(socket.create_connection(("127.0.0.1", int(port))), server_hostname="localhost")
nonce = base64.b64encode(os.urandom(16)).decode()
sock.sendall((
    "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
    "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n" % (path, nonce)).encode())
buffer = b""
while b"\r\n\r\n" not in buffer:
    chunk = sock.recv(4096)
    if not chunk:
        break
    buffer += chunk
head, _, buffer = buffer.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}


def send(payload):
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    size = len(payload)
    head = struct.pack(">BB", 0x82, 0x80 | size) if size < 126 else struct.pack(">BBH", 0x82, 0x80 | 126, size)
    sock.sendall(head + mask + masked)


def read_exact(n):
    global buffer
    while len(buffer) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError
        buffer += chunk
    data, buffer = buffer[:n], buffer[n:]
    return data


seen = {"status": lines[0], "protocol": headers.get("sec-websocket-protocol"), "stdout": "", "error": None, "closed": False}
if lines[0].split()[1] == "101":
    if stdin is not None:
        send(b"\x00" + stdin)
        send(b"\xff\x00")
    try:
        while True:
            first, second = read_exact(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack(">H", read_exact(2))[0]
            elif size == 127:
                size = struct.unpack(">Q", read_exact(8))[0]
            payload = read_exact(size)
            opcode = first & 0x0F
            if opcode == 0x8:
                seen["closed"] = True
                break
            if opcode == 0x2 and payload[:1] == b"\x01":
                seen["stdout"] += payload[1:].decode()
            elif opcode == 0x2 and payload[:1] == b"\x03":
                seen["error"] = json.loads(payload[1:])
    except EOFError:
        pass
print(json.dumps(seen))
