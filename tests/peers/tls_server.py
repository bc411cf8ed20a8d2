#!/usr/bin/env python3
"""tls_server.py: an HTTPS server on loopback with a self-signed
certificate (tests/peers/tls/, made once with `openssl req -x509 -days
36500 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1`), which no
client trusts: the connect-failure cause both commands name the same
(DEPTH_ZERO_SELF_SIGNED_CERT). Prints its URL on the first line of stdout,
then serves until killed."""
import http.server
import pathlib
import ssl

TLS = pathlib.Path(__file__).parent / "tls"
server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(TLS / "self_signed_cert.pem", TLS / "self_signed_key.pem")
server.socket = ctx.wrap_socket(server.socket, server_side=True)
print(f"https://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
