"""A stand-in kubelet for Capstan's end-to-end tests.

No kubelet can run on the test machines, so this serves, honestly, the
kubelet endpoints the API server forwards to, as a kubelet does:

- ``/containerLogs/<ns>/<pod>/<container>``: a fixed log, with tailLines,
  timestamps, limitBytes, previous and follow;
- ``/exec/<ns>/<pod>/<container>``: remote command protocol
  ``v4.channel.k8s.io`` over SPDY/3.1 (what a kubelet speaks; kubectl's
  WebSocket ``v5.channel.k8s.io`` is translated to it by the API server,
  and any WebSocket that reaches this server is refused). The "container" runs a few commands itself: ``echo``, ``cat``
  (stdin to stdout), ``false``, ``sh -c 'exit N'``, ``test -d``, and
  ``tar cf -`` / ``tar -xmf -`` over a directory standing for the
  container's filesystem, for ``kubectl cp``;
- ``/attach/<ns>/<pod>/<container>``: the same protocol, attached to the
  container's main process, which echoes its stdin (or, without stdin,
  says whose process it is and ends);
- ``/healthz``: ``ok`` (what nodes/proxy reaches in the tests);
- ``/portForward/<ns>/<pod>``: ``portforward.k8s.io`` over SPDY/3.1, each
  forwarded connection spliced to 127.0.0.1:<port>.

It trusts only client certificates of the CA it is given (the cluster CA)
whose CN is the API server's kubelet client.

Usage: kubelet_stand_in.py CERT KEY CLIENT_CA ROOT_DIR
"""

import io
import json
import os
import shlex
import socket
import ssl
import struct
import sys
import tarfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

# SPDY/3's header-compression dictionary, as its specification defines it:
# length-prefixed header words, then a block of common values.
_WORDS = [
    "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset",
    "accept-encoding", "accept-language", "accept-ranges", "age", "allow",
    "authorization", "cache-control", "connection", "content-base", "content-encoding",
    "content-language", "content-length", "content-location", "content-md5",
    "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host",
    "if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since",
    "last-modified", "location", "max-forwards", "pragma", "proxy-authenticate",
    "proxy-authorization", "range", "referer", "retry-after", "server", "te", "trailer",
    "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
    "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url",
    "public", "set-cookie", "keep-alive", "origin",
]
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417"
    "502504505203 Non-Authoritative Information204 No Content301 Moved Permanently"
    "400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error"
    "501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct"
    " Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,"
    "image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
    "publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 1
LOG_LINES = ["starting", "listening on :8080", "ready"]


class Spdy:
    """One SPDY/3.1 session, server side: frames in and out, streams by id."""

    def __init__(self, sock):
        self.sock = sock
        self.inflate = zlib.decompressobj(zdict=DICTIONARY)
        self.deflate = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)
        self.write_lock = threading.Lock()
        self.buffer = b""

    def read_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_frame(self):
        """("control", type, flags, payload) or ("data", stream, flags, payload)."""
        head = self.read_exact(8)
        length = int.from_bytes(head[5:8], "big")
        payload = self.read_exact(length)
        if head[0] & 0x80:
            return "control", int.from_bytes(head[2:4], "big"), head[4], payload
        return "data", int.from_bytes(head[0:4], "big") & 0x7FFFFFFF, head[4], payload

    def headers(self, block):
        raw = self.inflate.decompress(block)
        count, at, headers = struct.unpack(">I", raw[:4])[0], 4, {}
        for _ in range(count):
            (size,) = struct.unpack(">I", raw[at:at + 4])
            name = raw[at + 4:at + 4 + size].decode()
            at += 4 + size
            (size,) = struct.unpack(">I", raw[at:at + 4])
            headers[name] = raw[at + 4:at + 4 + size].decode()
            at += 4 + size
        return headers

    def header_block(self, headers):
        raw = struct.pack(">I", len(headers))
        for name, value in headers.items():
            raw += struct.pack(">I", len(name)) + name.encode() + struct.pack(">I", len(value)) + value.encode()
        return self.deflate.compress(raw) + self.deflate.flush(zlib.Z_SYNC_FLUSH)

    def send(self, frame):
        with self.write_lock:
            self.sock.sendall(frame)

    def control(self, kind, flags, payload):
        self.send(struct.pack(">HHI", 0x8003, kind, (flags << 24) | len(payload)) + payload)

    def reply(self, stream):
        with self.write_lock:
            block = self.header_block({})
            payload = struct.pack(">I", stream) + block
            self.sock.sendall(struct.pack(">HHI", 0x8003, SYN_REPLY, len(payload)) + payload)

    def data(self, stream, data, fin=False):
        for at in range(0, max(len(data), 1), 16384):
            chunk = data[at:at + 16384]
            last = fin and at + 16384 >= len(data)
            self.send(struct.pack(">II", stream, ((FLAG_FIN if last else 0) << 24) | len(chunk)) + chunk)


def status_json(code):
    if code == 0:
        return json.dumps({"metadata": {}, "status": "Success"}).encode()
    return json.dumps({
        "metadata": {}, "status": "Failure",
        "message": "command terminated with non-zero exit code: exit status %d" % code,
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }).encode()


class Container:
    """What a command does in the container: its stdout and exit code."""

    def __init__(self, root):
        self.root = root

    def path(self, inside):
        return os.path.join(self.root, inside.lstrip("/"))

    def run(self, command, stdin):
        name, args = command[0], command[1:]
        if name == "echo":
            return (" ".join(args) + "\n").encode(), 0
        if name == "cat" and not args:
            return stdin(), 0
        if name == "cat":
            with open(self.path(args[0]), "rb") as f:
                return f.read(), 0
        if name == "false":
            return b"", 1
        if name == "sh" and args[:1] == ["-c"]:
            words = shlex.split(args[1])
            if words[:1] == ["exit"]:
                return b"", int(words[1])
            return self.run(words, stdin)
        if name == "test" and args[:1] == ["-d"]:
            return b"", 0 if os.path.isdir(self.path(args[1])) else 1
        if name == "tar" and args[:2] == ["cf", "-"]:
            out = io.BytesIO()
            with tarfile.open(fileobj=out, mode="w") as tar:
                source = args[2]
                tar.add(self.path(source), arcname=source.lstrip("/"))
            return out.getvalue(), 0
        if name == "tar" and "-xmf" in args:
            target = self.path(args[args.index("-C") + 1]) if "-C" in args else self.root
            os.makedirs(target, exist_ok=True)
            with tarfile.open(fileobj=io.BytesIO(stdin()), mode="r") as tar:
                tar.extractall(target, filter="data")
            return b"", 0
        return ("%s: command not found\n" % name).encode(), 127


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        subject = dict(pair[0] for pair in self.connection.getpeercert()["subject"])
        if subject.get("commonName") != "kube-apiserver-kubelet-client":
            self.reply(401, "Unauthorized")
            return False
        return True

    def do_GET(self):
        if not self.authorized():
            return
        url = urlparse(self.path)
        parts = url.path.split("/")
        if self.headers.get("Upgrade", "").lower() == "websocket":
            # A kubelet speaks remote command over WebSocket only in the
            # legacy versions; kubectl asks for v5 alone.
            return self.reply(400, "unable to upgrade: unable to negotiate protocol: client supports %s, server supports [channel.k8s.io base64.channel.k8s.io v4.channel.k8s.io v4.base64.channel.k8s.io]" % self.headers.get("Sec-WebSocket-Protocol"))
        if len(parts) == 5 and parts[1] == "containerLogs":
            return self.logs(parts[4], {k: v[0] for k, v in parse_qs(url.query).items()})
        if url.path == "/healthz":
            return self.reply(200, "ok")
        self.reply(404, "404 page not found")

    def logs(self, container, query):
        if container != "main":
            return self.reply(400, 'container "%s" in pod "%s" is waiting to start: ContainerCreating' % (container, self.path.split("/")[3]))
        lines = ["previous run"] if query.get("previous") == "true" else list(LOG_LINES)
        if "tailLines" in query:
            lines = lines[len(lines) - int(query["tailLines"]):]
        if query.get("timestamps") == "true":
            lines = ["2026-01-01T00:00:00.000000000Z " + line for line in lines]
        text = "".join(line + "\n" for line in lines)
        if "limitBytes" in query:
            text = text[:int(query["limitBytes"])]
        if query.get("follow") != "true":
            return self.reply(200, text)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in [text] + ["tick %d\n" % n for n in range(3)]:
            data = chunk.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            time.sleep(0.2)
        self.wfile.write(b"0\r\n\r\n")

    def do_POST(self):
        if not self.authorized():
            return
        url = urlparse(self.path)
        parts = url.path.split("/")
        query = parse_qs(url.query)
        offered = [v.strip() for v in ",".join(self.headers.get_all("X-Stream-Protocol-Version") or []).split(",")]
        if self.headers.get("Upgrade", "").lower() != "spdy/3.1":
            return self.reply(400, "Upgrade request required")
        if len(parts) == 5 and parts[1] == "exec":
            if "v4.channel.k8s.io" not in offered:
                return self.reply(403, "subprotocol negotiation failed")
            return self.switch("v4.channel.k8s.io", lambda spdy: self.exec(spdy, query))
        if len(parts) == 5 and parts[1] == "attach":
            if "v4.channel.k8s.io" not in offered:
                return self.reply(403, "subprotocol negotiation failed")
            main = ["cat"] if query.get("input") == ["1"] else ["echo", "main process of " + parts[4]]
            return self.switch("v4.channel.k8s.io", lambda spdy: self.exec(spdy, dict(query, command=main)))
        if len(parts) == 4 and parts[1] == "portForward":
            if "portforward.k8s.io" not in offered:
                return self.reply(403, "subprotocol negotiation failed")
            return self.switch("portforward.k8s.io", self.port_forward)
        self.reply(404, "404 page not found")

    def switch(self, protocol, serve):
        self.send_response(101)
        self.send_header("Connection", "Upgrade")
        self.send_header("Upgrade", "SPDY/3.1")
        self.send_header("X-Stream-Protocol-Version", protocol)
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        try:
            serve(Spdy(self.connection))
        except (EOFError, OSError):
            pass

    def exec(self, spdy, query):
        command = query.get("command", [])
        want = {"error"} | {name for name, flag in
                           [("stdin", "input"), ("stdout", "output"), ("stderr", "error"), ("resize", "tty")]
                           if query.get(flag) == ["1"]}
        streams, stdin, stdin_done = {}, bytearray(), threading.Event()
        if "stdin" not in want:
            stdin_done.set()
        ready = threading.Event()

        def pump():
            while True:
                kind, what, flags, payload = spdy.read_frame()
                if kind == "control" and what == SYN_STREAM:
                    stream = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF
                    streams[spdy.headers(payload[10:]).get("streamtype")] = stream
                    spdy.reply(stream)
                    if want <= set(streams):
                        ready.set()
                elif kind == "control" and what == PING:
                    spdy.control(PING, 0, payload)
                elif kind == "data" and streams.get("stdin") == what:
                    stdin.extend(payload)
                    if flags & FLAG_FIN:
                        stdin_done.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(10):
            return

        def read_stdin():
            stdin_done.wait(30)
            return bytes(stdin)

        out, code = Container(self.server.root).run(command, read_stdin)
        spdy.data(streams["stdout"], out, fin=True) if "stdout" in streams else None
        if "stderr" in streams:
            spdy.data(streams["stderr"], b"", fin=True)
        spdy.data(streams["error"], status_json(code), fin=True)
        time.sleep(0.2)
        spdy.control(GOAWAY, 0, struct.pack(">II", 0, 0))

    def port_forward(self, spdy):
        data_streams = {}

        def splice(stream, port):
            try:
                upstream = socket.create_connection(("127.0.0.1", port))
            except OSError:
                return
            data_streams[stream] = upstream

            def back():
                while True:
                    chunk = upstream.recv(65536)
                    if not chunk:
                        spdy.data(stream, b"", fin=True)
                        return
                    spdy.data(stream, chunk)

            threading.Thread(target=back, daemon=True).start()

        while True:
            kind, what, flags, payload = spdy.read_frame()
            if kind == "control" and what == SYN_STREAM:
                stream = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF
                headers = spdy.headers(payload[10:])
                spdy.reply(stream)
                if headers.get("streamtype") == "data":
                    splice(stream, int(headers["port"]))
            elif kind == "control" and what == PING:
                spdy.control(PING, 0, payload)
            elif kind == "data" and what in data_streams:
                if payload:
                    data_streams[what].sendall(payload)
                if flags & FLAG_FIN:
                    data_streams[what].shutdown(socket.SHUT_WR)


# Every interface: nodes/proxy refuses loopback addresses.
server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
server.root = sys.argv[4]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
context.verify_mode = ssl.CERT_REQUIRED
context.load_verify_locations(sys.argv[3])
# HTTP/1.1 only: upgrades are spliced byte for byte.
context.set_alpn_protocols(["http/1.1"])
server.socket = context.wrap_socket(server.socket, server_side=True)
print("port", server.server_address[1], flush=True)
server.serve_forever()
