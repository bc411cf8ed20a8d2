#!/usr/bin/env python3
"""http_fault.py: a Streamable HTTP MCP server on loopback with one fault,
for the HTTP answer classification (a 404 that means "no such method" vs
one that means "no such session"). Prints its URL on the first line of
stdout, then serves until killed.

Flags:
  --mode expire       the first session expires at its first ping: 404 with
                      JSON-RPC -32001 "Session not found" (as the official
                      SDKs answer); a new initialize gets a new session
  --mode expire-400  as expire, but an unknown session is answered 400
                      "Bad Request: No valid session ID provided", as the
                      TypeScript SDK's example servers (server-everything
                      among them) answer a session they lost
  --mode refuse-sessions  every ping on any session is a 404 "Session not
                      found" (initialize works): a server that cannot keep a
                      session; tools/call says how many sessions were opened
                      {"sessions": N}
  --mode unsupported  every ping is a 404 with JSON-RPC -32601
  --mode deaf         ping-deaf: a ping is never answered (its POST hangs
                      until the client leaves), everything else is
                      (tools/list: -32601, which still proves the server's
                      loop ran); a tools/call with arguments {"hang": true}
                      hangs as a ping does, and tools/call "hung" waits (10 s
                      at most) for every hanging POST to be left, then says
                      how many are still open: {"hung": N}
  --mode freeze       after the handshake nothing is answered (every POST
                      hangs): a frozen server
  --mode silent       nothing is ever answered, initialize included: a server
                      frozen before its handshake
  --mode unauthorized every POST is a 401 with an OAuth error body (no
                      JSON-RPC in it), as a server behind a token check
  --mode refuse       every POST is a 400 with a JSON-RPC error whose id is
                      null, as the official TypeScript SDK refuses
  --mode strict      every POST must carry one Authorization, Bearer t or
                      Basic dTpwQA== (the URL credentials u:p%40), and one
                      each of Content-Type, Accept (JSON and SSE) and, after
                      initialize, Mcp-Session-Id and MCP-Protocol-Version (none
                      before), as mcpping writes them; else a 400 saying which
  --mode sse-ends   every request but initialize is answered by an event
                      stream that carries one comment and ends (Connection:
                      close) without the answer
  --mode sse-breaks  a tools/call is answered by a chunked event stream
                      that carries one comment and then breaks: the
                      connection closes before the body's last chunk, as a
                      server that dies mid-call or a proxy that cuts a long
                      stream does; no event ID came, so it cannot be
                      resumed; pings are answered as usual
  --mode sse-lingers  every request but initialize and tools/call is answered
                      on an event stream that stays open after the answer,
                      until the client leaves (the spec's server SHOULD close
                      it; some do not, nor do some proxies). A tools/call
                      waits (10 s at most) for every such stream to be left,
                      then says how many are still open: {"open_streams": N}
  --mode json-breaks  a tools/call or tools/list is answered HTTP 200 application/json
                      whose body breaks: Content-Length 200, then 20 bytes and
                      the connection closed (a server that dies mid-answer, a
                      proxy that cuts it); pings are answered as usual
  --mode init-breaks  initialize is answered HTTP 200 application/json whose
                      body breaks, as json-breaks does to a tools/call
  --mode endless    a tools/call is answered HTTP 200 application/json with
                      a body that never ends (chunked), as a broken or hostile
                      server might; everything else is answered as usual
  --mode listen-later  the GET listening stream fails before it opens: the
                      first GET is closed with no answer, the second is a 503;
                      the third opens, carries a ping from the server (event
                      id ev-1, retry 600 ms) and ends once it is answered; the
                      fourth carries another ping and is held open. A
                      tools/call waits (10 s at most) for the fourth's ping to
                      be answered (so the client has seen that stream open),
                      then says what each GET met, the
                      Last-Event-ID each carried and how long after the third
                      ended the fourth came: {"gets": [...], "last_event_ids":
                      [...], "pong": bool, "reopened_after_ms": int}
  --mode listen-held  the first GET listening stream is read and never
                      answered (no status line: a proxy that accepts and
                      stalls), held until the client leaves; the second opens
                      and carries a ping from the server. A tools/call waits
                      (15 s at most) for that ping's answer, then says what
                      each GET met: {"gets": ["held", "stream"], "pong": bool}
  --mode expire-resume  the first session's first tools/call is answered by
                      an event stream that gives an event ID (ev-1, retry
                      50 ms) and ends without the answer; the session then
                      expires, so the resuming GET (Last-Event-ID) is a 404
                      "Session not found"; a GET on a live session is a 405.
                      Every later tools/call is answered with the session it
                      came on: {"session": "session-N"}
  --mode json-bom    every request is answered application/json with a UTF-8
                      byte order mark before the JSON (no session)
  --mode sse-bom     every request is answered by an event stream whose data
                      starts with a UTF-8 byte order mark (no session)
  --mode keep-alive  no fault: a ping is answered by a chunked event stream
                      that ends in the same write as its event (as the
                      TypeScript SDK's server answers), the rest as usual;
                      every connection is kept open. A tools/call says how
                      many connections were opened, how many of each
                      method were answered and the first three messages'
                      methods: {"connections": N, "answered": {"ping": P,
                      ...}, "arrived": ["initialize", ...]}
  --mode drop-idle   as keep-alive, but the second request on any
                      connection is read and the connection closed with no
                      answer (a server whose keep-alive timeout ran out as
                      the request came); a tools/call also says how many
                      were dropped: {"dropped": D}
  --mode mute-notifications  a notification's POST is read and never
                      answered (held until the client leaves); requests are
                      answered as usual
Each POST answers one JSON message (application/json); notifications get
202. Every session id is "session-N".
"""
import argparse
import http.server
import json
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=["expire", "unsupported", "deaf", "freeze", "silent", "sse-breaks",
                                          "unauthorized", "refuse", "strict", "sse-ends", "endless", "listen-later", "listen-held", "sse-lingers", "json-breaks", "init-breaks",
                                          "expire-resume", "expire-400", "refuse-sessions", "json-bom", "sse-bom",
                                          "keep-alive", "drop-idle", "mute-notifications"],
                required=True)
ap.add_argument("--tls", action="store_true",
                help="serve HTTPS with tests/peers/tls/'s self-signed certificate (for 127.0.0.1)")
args = ap.parse_args()

lock = threading.Lock()
state = {"open": 0, "sessions": 0, "live": set(), "expired_once": False, "gets": [], "last_event_ids": [],
         "ended": None, "gap": None, "connections": 0, "dropped": 0, "answered": {},
         "arrived": []}
pong = threading.Event()  # listen-later: the client answered the ping sent on its GET stream
lingering = threading.Condition(lock)  # hang(): state["open"] changed
reopened = threading.Event()  # listen-later: the stream opened again carried its ping, answered


def left_open():
    """How many requests hang() still holds, after waiting (10 s at most)
    for the clients to leave them all."""
    with lingering:
        lingering.wait_for(lambda: state["open"] == 0, 10)
        return state["open"]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body go in two writes: without this, Nagle holds the body for
    # the client's delayed ACK (~40 ms a request), as no real server does.
    disable_nagle_algorithm = True
    requests_here = 0  # on this connection

    def setup(self):
        super().setup()
        with lock:
            state["connections"] += 1

    def log_message(self, *a):  # quiet
        pass

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def bom_answer(self, mid, method):
        result = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "serverInfo": {"name": "http-fault", "version": "1"}} if method == "initialize" else {}
        text = "\ufeff" + json.dumps({"jsonrpc": "2.0", "id": mid, "result": result})
        if args.mode == "sse-bom":
            data, kind = f"event: message\ndata: {text}\n\n".encode(), "text/event-stream"
        else:
            data, kind = text.encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if args.mode == "expire-resume":
            with lock:
                live = self.headers.get("Mcp-Session-Id") in state["live"]
            if live:
                return self.reply(405)
            return self.reply(404, {"jsonrpc": "2.0", "id": None,
                                    "error": {"code": -32001, "message": "Session not found"}})
        if args.mode == "listen-held":
            return self.listen_held()
        if args.mode != "listen-later":
            return self.send_error(501, "Unsupported method ('GET')")  # as with no do_GET
        with lock:
            n = len(state["gets"])
            state["gets"].append(["no answer", 503, "stream"][min(n, 2)])
            state["last_event_ids"].append(self.headers.get("Last-Event-ID"))
        if n == 0:
            self.close_connection = True  # closed with no answer at all
            return
        if n == 1:
            return self.reply(503)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.close_connection = True
        if n == 2:
            self.wfile.write(b'retry: 600\nid: ev-1\ndata: {"jsonrpc":"2.0","id":"listen-ping","method":"ping"}\n\n')
            self.wfile.flush()
            pong.wait(10)
            with lock:
                state["ended"] = time.monotonic()
            return  # the stream ends: the client opens it again, 600 ms on
        with lock:
            if state["gap"] is None and state["ended"] is not None:
                state["gap"] = time.monotonic() - state["ended"]
        self.wfile.write(b'id: ev-2\ndata: {"jsonrpc":"2.0","id":"listen-ping-2","method":"ping"}\n\n')
        self.wfile.flush()
        self.rfile.read(1)  # held open until the client leaves

    def hang(self):
        """No answer, until the client leaves (counted in state["open"])."""
        self.close_connection = True
        with lingering:
            state["open"] += 1
        try:
            self.rfile.read(1)
        except OSError:
            pass
        finally:
            with lingering:
                state["open"] -= 1
                lingering.notify_all()

    def linger(self, method, mid):
        if method == "tools/call":
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"open_streams": left_open()}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        answer = {"jsonrpc": "2.0", "id": mid, "result": {}}
        try:
            self.wfile.write(b"data: " + json.dumps(answer).encode() + b"\n\n")
            self.wfile.flush()
        except OSError:
            return None
        return self.hang()  # held open after the answer, until the client leaves

    def listen_held(self):
        with lock:
            n = len(state["gets"])
            state["gets"].append("held" if n == 0 else "stream")
        self.close_connection = True
        if n == 0:
            self.rfile.read(1)  # no answer at all, until the client leaves
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b'data: {"jsonrpc":"2.0","id":"listen-ping","method":"ping"}\n\n')
        self.wfile.flush()
        self.rfile.read(1)  # held open until the client leaves

    def do_DELETE(self):
        with lock:
            state["live"].discard(self.headers.get("Mcp-Session-Id"))
        self.reply(200)

    def wrong_header(self, method):
        """The first header the strict mode refuses, or None."""
        want = {"Authorization": ("Bearer t", "Basic dTpwQA=="), "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
        if method == "initialize":
            if self.headers.get_all("Mcp-Session-Id"):
                return "Mcp-Session-Id on initialize"
        else:
            want["MCP-Protocol-Version"] = "2025-11-25"
            want["Mcp-Session-Id"] = None  # any one value
        for name, value in want.items():
            got = self.headers.get_all(name) or []
            if len(got) != 1 or value is not None and got[0] not in (value if isinstance(value, tuple) else (value,)):
                return f"{name}: {got}"
        return None

    def broken_json(self):
        """HTTP 200 application/json whose body breaks (180 bytes short)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "200")
        self.end_headers()
        self.wfile.write(b'{"jsonrpc":"2.0","id"')
        self.wfile.flush()
        self.close_connection = True

    def sse_answer(self, answer):
        """One event on a chunked stream, ended in the same write."""
        event = b"data: " + json.dumps(answer).encode() + b"\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        sid = self.headers.get("Mcp-Session-Id")
        method, mid = msg.get("method"), msg.get("id")
        self.requests_here += 1
        if args.mode == "drop-idle" and self.requests_here == 2:
            with lock:
                state["dropped"] += 1
            self.close_connection = True
            return None  # read, and closed with no answer
        if args.mode in ("keep-alive", "drop-idle") and method:
            with lock:
                if len(state["arrived"]) < 3:
                    state["arrived"].append(method)
                if mid is not None:
                    state["answered"][method] = state["answered"].get(method, 0) + 1
        if args.mode == "strict" and (wrong := self.wrong_header(method)):
            return self.reply(400, {"jsonrpc": "2.0", "id": mid,
                                    "error": {"code": -32600, "message": f"bad header {wrong}"}})
        if args.mode == "silent":
            threading.Event().wait()  # hangs this request's thread for good
        if args.mode == "unauthorized":
            return self.reply(401, {"error": "invalid_token",
                                    "error_description": "The access token expired"},
                              [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        if args.mode in ("json-bom", "sse-bom") and mid is not None and method:
            return self.bom_answer(mid, method)
        if args.mode == "refuse":
            return self.reply(400, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32000, "message": "Bad Request: Server not initialized"}})
        if method == "initialize" and args.mode == "init-breaks":
            return self.broken_json()
        if method == "initialize":
            with lock:
                state["sessions"] += 1
                new = f"session-{state['sessions']}"
                state["live"].add(new)
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "http-fault", "version": "1"}}},
                [("Mcp-Session-Id", new)])
        with lock:
            live = sid in state["live"]
            if method == "ping" and args.mode in ("expire", "expire-400") and live and not state["expired_once"]:
                state["expired_once"] = True
                state["live"].discard(sid)
                live = False
            if method == "ping" and args.mode == "refuse-sessions":
                live = False
        if not live and args.mode == "expire-400":
            return self.reply(400, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32000, "message": "Bad Request: No valid session ID provided"}})
        if not live:
            return self.reply(404, {"jsonrpc": "2.0", "id": None,
                                    "error": {"code": -32001, "message": "Session not found"}})
        if method == "tools/call" and args.mode == "refuse-sessions":
            with lock:
                opened = state["sessions"]
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"sessions": opened}})
        if mid == "listen-ping" and "result" in msg:
            pong.set()
        if mid == "listen-ping-2" and "result" in msg:
            reopened.set()
        if mid is None and method and args.mode == "mute-notifications":
            return self.hang()
        if mid is None or "method" not in msg:
            return self.reply(202)
        if args.mode in ("keep-alive", "drop-idle"):
            if method == "ping":
                return self.sse_answer({"jsonrpc": "2.0", "id": mid, "result": {}})
            if method == "tools/call":
                with lock:
                    figures = {k: state[k] for k in ("connections", "dropped", "answered", "arrived")}
                return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": json.loads(json.dumps(figures))})
        if method == "tools/call" and args.mode == "listen-later":
            answered = pong.wait(10) and reopened.wait(10)
            with lock:
                gets, ids, gap = list(state["gets"]), list(state["last_event_ids"]), state["gap"]
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {
                "gets": gets, "last_event_ids": ids, "pong": answered,
                "reopened_after_ms": None if gap is None else int(gap * 1000)}})
        if args.mode == "sse-lingers":
            return self.linger(method, mid)
        if method == "tools/call" and args.mode == "listen-held":
            answered = pong.wait(15)
            with lock:
                gets = list(state["gets"])
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"gets": gets, "pong": answered}})
        if method == "tools/call" and args.mode == "expire-resume":
            with lock:
                first, state["expired_once"] = not state["expired_once"], True
                if first:
                    state["live"].discard(sid)  # gone once this stream ends
            if not first:
                return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"session": sid}})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"id: ev-1\nretry: 50\ndata: \n\n")
            self.close_connection = True
            return None
        if method == "tools/call" and args.mode == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"[" + b"0," * (1 << 16)
            try:
                while True:  # until the client stops reading and closes
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except OSError:
                self.close_connection = True
                return
        if args.mode == "deaf" and (method == "ping" or (msg.get("params") or {}).get("arguments", {}).get("hang")):
            return self.hang()
        if method == "tools/call" and args.mode == "deaf" and msg["params"].get("name") == "hung":
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"hung": left_open()}})
        if args.mode == "freeze":
            threading.Event().wait()  # hangs this request's thread for good
        if method == "ping" and args.mode == "unsupported":
            return self.reply(404, {"jsonrpc": "2.0", "id": mid,
                                    "error": {"code": -32601, "message": "Method not found"}})
        if method in ("tools/call", "tools/list") and args.mode == "json-breaks":
            return self.broken_json()
        if method == "tools/call" and args.mode == "sse-breaks":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            comment = b": working on it\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(comment), comment))
            self.wfile.flush()
            self.close_connection = True  # no last chunk: the body breaks
            return None
        if args.mode == "sse-ends":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b": working on it\n\n")
            self.close_connection = True
            return None
        if method == "ping":
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {}})
        return self.reply(200, {"jsonrpc": "2.0", "id": mid,
                                "error": {"code": -32601, "message": "Method not found"}})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True  # hung requests do not hold the exit
if args.tls:
    import pathlib
    import ssl
    tls = pathlib.Path(__file__).parent / "tls"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls / "self_signed_cert.pem", tls / "self_signed_key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
scheme = "https" if args.tls else "http"
print(f"{scheme}://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
sys.exit(0)
